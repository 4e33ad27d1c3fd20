/**
 * Admission of an out-of-process driver (docs/driver-protocol.md, Admission): before every start,
 * the file the operator admitted must still have the SHA-256 the operator trusted, and what runs is
 * exactly the bytes that were hashed. The file is read once; those bytes are hashed and written to
 * a private copy in the hub's data dir, and the command runs that copy in the file's place. A file
 * swapped (or rewritten in place) after the check is never run: the hub no longer reads it.
 */
import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, delimiter, isAbsolute, join, resolve } from 'node:path';
import { DriverError } from '../contract';
import { writeFileAtomic } from '../files';
import type { DriverAdmission, DriverProcessStatus } from '../../../shared/driver-status';

/** The file the operator admitted and its SHA-256 (64 lowercase hex). */
export interface Integrity {
  file: string;
  sha256: string;
}

export type Admission = DriverAdmission;

/** Where and how a start is admitted. */
export interface AdmitOptions {
  /** The driver's command (argv): the argument(s) naming `integrity.file` are replaced by the copy. */
  command: readonly string[];
  /** The driver's working directory: a relative `integrity.file` or argument is read from there. */
  cwd: string;
  /** PATH of the driver's environment: a bare program name is found where spawn would find it. */
  path: string | undefined;
  /** The hub's private directory for this driver's admitted copy (created 0700, with any missing parent). */
  dir: string;
}

/** What one admission check found: the verdict, the file and hashes it compared, and why it refuses. */
export interface AdmissionCheck {
  admission: Admission;
  integrity: DriverProcessStatus['integrity'];
  refusal?: DriverError;
  /** Admitted: the command to spawn (it runs the private copy), and the admitted file's own path. */
  run?: { command: string[]; file: string };
}

/** SHA-256 of a file, hex. */
export async function sha256File(file: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(file))
    .digest('hex');
}

/**
 * The positions in `command` that name `file` (resolved against `cwd`): any argument (the script an
 * interpreter runs), or the program itself, found on PATH as spawn finds it when it has no slash.
 */
export function commandPositions(command: readonly string[], file: string, cwd: string, path: string | undefined): number[] {
  const target = resolve(cwd, file);
  const positions: number[] = [];
  command.forEach((arg, i) => {
    if (i === 0 && !arg.includes('/')) {
      const found = (path ?? '').split(delimiter).find((dir) => dir && isAbsolute(dir) && join(dir, arg) === target);
      if (found) positions.push(0);
    } else if (resolve(cwd, arg) === target) positions.push(i);
  });
  return positions;
}

/**
 * A directory only this user can enter: created 0700, or tightened to it; refused when it is a
 * symlink or someone else's, since what is written in it is what runs.
 */
function privateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  const ours = typeof process.getuid !== 'function' || st.uid === process.getuid();
  if (!st.isDirectory() || !ours) throw new Error(`${dir} is not a directory of this user`);
  if ((st.mode & 0o777) !== 0o700) chmodSync(dir, 0o700);
}

/** Checks `integrity` (what the config admits for driver `id`; undefined when it admits nothing) and stages the bytes it hashed. */
export async function admit(id: string, integrity: Integrity | undefined, options: AdmitOptions): Promise<AdmissionCheck> {
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
  const positions = commandPositions(options.command, integrity.file, options.cwd, options.path);
  if (positions.length === 0) {
    // The hub can run only what it has read; a file the command never names cannot be pinned.
    return {
      admission: 'unchecked',
      integrity: { file: integrity.file, expected: integrity.sha256 },
      refusal: new DriverError(
        'Unavailable',
        `${id} is not started: its integrity file ${integrity.file} is not in its command, so the hub cannot run the bytes it checked`,
        {
          hint: 'set integrity.file in config.json to the program or script the command runs',
        },
      ),
    };
  }
  let bytes: Buffer;
  try {
    bytes = await readFile(resolve(options.cwd, integrity.file));
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
  const actual = createHash('sha256').update(bytes).digest('hex');
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
  // The same bytes that were hashed, under the file's own name (an interpreter may read its extension).
  const copy = join(options.dir, basename(integrity.file));
  try {
    privateDir(options.dir);
    // The program itself must be executable; a script an interpreter reads needs only reading.
    writeFileAtomic(copy, bytes, positions.includes(0) ? 0o500 : 0o400);
  } catch (e) {
    return {
      admission: 'admitted',
      integrity: checked,
      refusal: new DriverError(
        'Unavailable',
        `${id} is not started: its admitted copy ${copy} cannot be written (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
        {
          hint: 'check that the data directory is yours and writable, then restart the driver',
        },
      ),
    };
  }
  const command = options.command.map((arg, i) => (positions.includes(i) ? copy : arg));
  return { admission: 'admitted', integrity: checked, run: { command, file: resolve(options.cwd, integrity.file) } };
}
