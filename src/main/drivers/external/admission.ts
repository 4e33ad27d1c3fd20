/**
 * Admission of an out-of-process driver (docs/driver-protocol.md, Admission): before every start,
 * the file the operator admitted must still have the SHA-256 the operator trusted.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { DriverError } from '../contract';
import type { DriverAdmission, DriverProcessStatus } from '../../../shared/driver-status';

/** The file the operator admitted and its SHA-256 (64 lowercase hex). */
export interface Integrity {
  file: string;
  sha256: string;
}

export type Admission = DriverAdmission;

/** What one admission check found: the verdict, the file and hashes it compared, and why it refuses. */
export interface AdmissionCheck {
  admission: Admission;
  integrity: DriverProcessStatus['integrity'];
  refusal?: DriverError;
}

/** SHA-256 of a file, hex. */
export async function sha256File(file: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(file))
    .digest('hex');
}

/** Checks `integrity` (what the config admits for driver `id`; undefined when it admits nothing). */
export async function admit(id: string, integrity: Integrity | undefined): Promise<AdmissionCheck> {
  if (!integrity) {
    // Agents read this line too (channel_doctor): the command, whose arguments may be private, is in status() only.
    return {
      admission: 'untrusted',
      integrity: {},
      refusal: new DriverError('Unavailable', `${id} is not started: it waits for the operator to trust it`, {
        hint: 'trust it in the panel, which shows its command and the hash of its file',
      }),
    };
  }
  let actual: string;
  try {
    actual = await sha256File(integrity.file);
  } catch (e) {
    return {
      admission: 'mismatch',
      integrity: { file: integrity.file, expected: integrity.sha256 },
      refusal: new DriverError(
        'Unavailable',
        `${id} is not started: its integrity file ${integrity.file} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); admitted sha256 ${integrity.sha256}`,
        { hint: 'restore the file, or trust the driver again in the panel' },
      ),
    };
  }
  const checked = { file: integrity.file, expected: integrity.sha256, actual };
  if (actual !== integrity.sha256.toLowerCase()) {
    return {
      admission: 'mismatch',
      integrity: checked,
      refusal: new DriverError(
        'Unavailable',
        `${id} is not started: integrity check failed, ${integrity.file} has sha256 ${actual} but the operator admitted ${integrity.sha256}`,
        { hint: 'if the change is yours, trust the driver again in the panel; otherwise find out who changed the file' },
      ),
    };
  }
  return { admission: 'admitted', integrity: checked };
}
