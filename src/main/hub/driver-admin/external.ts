/**
 * Out-of-process drivers as the operator configures them (`external_drivers` in config.json):
 * building their hosts, and admission. A driver runs only when `integrity` names a file whose
 * SHA-256 is still the one the operator trusted; the host checks that before every start and runs
 * its private copy of the bytes it checked (`<data dir>/admitted-drivers/<id>/`).
 */
import { statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { describeSchemaError, schemaValidator } from '../../kernel';
import { ExternalDriver, sha256File } from '../../drivers';
import type { ExternalStatus, Integrity, SchemaCheck } from '../../drivers';
import type { ConfigStore, ExternalDriverEntry } from '../config';
import { HubError } from '../errors';
import { clipName } from '../../../shared/escape';

/** What the panel shows of an external driver: the host's status, with the file to trust when untrusted. */
export type ExternalDriverStatus = ExternalStatus;

/**
 * How a host checks a driver's answers against the protocol's schemas: the kernel's validator and
 * its wording of the first error (a driver never runs the kernel itself).
 */
export const protocolCheck: SchemaCheck = (schema) => {
  const validate = schemaValidator(schema);
  return (value) => (validate(value) ? undefined : describeSchemaError(validate.errors));
};

/**
 * How a hub watches that its drivers answer: an `info` ping each second; one unanswered for 2.5 s
 * makes the driver `not_responding` (within about 3.5 s of it stopping), and calls then fail at once.
 */
export const DRIVER_PING = { intervalMs: 1000, timeoutMs: 2500 } as const;

/** The configured entries (read once, when the hub starts). */
export function externalEntries(config: ConfigStore): ExternalDriverEntry[] {
  return (config.get().external_drivers as ExternalDriverEntry[] | undefined) ?? [];
}

/** The hub's private directory holding the copy of driver `id`'s admitted file that its starts run. */
export function admittedDir(dataDir: string, id: string): string {
  return join(dataDir, 'admitted-drivers', id);
}

/**
 * A host per entry; its integrity is read live, so a trust takes effect at the next start.
 * `admitted` is told each admission before the driver is spawned (the admin records it).
 */
export function createExternalDrivers(
  config: ConfigStore,
  dataDir: string,
  entries: ExternalDriverEntry[],
  callTimeoutMs: () => number,
  admitted?: (id: string, integrity: Integrity) => void,
  ping: { intervalMs: number; timeoutMs: number } = DRIVER_PING,
): ExternalDriver[] {
  return entries.map(
    (entry) =>
      new ExternalDriver({
        id: entry.id,
        check: protocolCheck,
        command: entry.command,
        cwd: dataDir,
        env: driverEnv(),
        integrity: () => externalEntries(config).find((e) => e.id === entry.id)?.integrity,
        admittedDir: admittedDir(dataDir, entry.id),
        ...(admitted ? { onAdmitted: (integrity: Integrity) => admitted(entry.id, integrity) } : {}),
        ping,
        get callTimeoutMs() {
          return callTimeoutMs();
        },
      }),
  );
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * The file an untrusted entry would be admitted by: the last argument naming a file (the script
 * an interpreter runs), else the program itself, found as the process would find it.
 */
export function integrityCandidate(command: string[], cwd: string): string | undefined {
  for (const arg of command.slice(1).reverse()) {
    if (arg.startsWith('-')) continue;
    const path = resolve(cwd, arg);
    if (isFile(path)) return path;
  }
  const program = command[0]!;
  if (program.includes('/')) {
    const path = isAbsolute(program) ? program : resolve(cwd, program);
    return isFile(path) ? path : undefined;
  }
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && isFile(join(dir, program))) return join(dir, program);
  }
  return undefined;
}

/** A host's status; for an untrusted one, the file trusting it would admit and its hash now. */
export async function externalStatus(driver: ExternalDriver, dataDir: string): Promise<ExternalDriverStatus> {
  const status = driver.status();
  if (status.admission !== 'untrusted') return status;
  const file = integrityCandidate(driver.command, dataDir);
  if (!file) return status;
  const actual = await sha256File(file).catch(() => undefined);
  return { ...status, integrity: { file, ...(actual ? { actual } : {}) } };
}

/**
 * Writes `integrity` for an entry with the hash the operator saw, if the file still has it. The
 * file is the one already admitted (a changed driver trusted again), else the candidate. `before`
 * is told what will be written once it is checked, before the config changes (the admin records
 * the operator's decision there, so no start can see the new integrity without it).
 */
export async function trustEntry(config: ConfigStore, dataDir: string, id: string, sha256: string, before?: (trusted: Integrity) => void): Promise<Integrity> {
  const entry = externalEntries(config).find((e) => e.id === id);
  if (!entry)
    throw new HubError('core', 'NotFound', `no external driver ${clipName(id)} in the config`, {
      hint: 'add it to external_drivers in config.json and restart the hub',
    });
  const file = entry.integrity?.file ?? integrityCandidate(entry.command, dataDir);
  if (!file)
    throw new HubError(id, 'NotFound', `no file to trust for ${id}: no argument of ${JSON.stringify(entry.command)} names a file`, {
      hint: "set integrity.file in config.json to the driver's program or script",
    });
  const actual = await sha256File(file).catch((e: NodeJS.ErrnoException) => {
    throw new HubError(id, 'Unavailable', `cannot read ${file} to trust ${id} (${e.code ?? e.message})`, { hint: 'check the file exists and is readable' });
  });
  if (actual !== sha256.toLowerCase()) {
    throw new HubError(id, 'Rejected', `${file} changed since you saw it: its sha256 is now ${actual}, you were shown ${sha256}`, {
      hint: 'look at the driver again and trust the hash it has now',
    });
  }
  before?.({ file, sha256: actual });
  config.update((raw) => {
    const list = raw.external_drivers as ExternalDriverEntry[] | undefined;
    const target = list?.find((e) => e.id === id);
    if (!target)
      throw new HubError('core', 'NotFound', `no external driver ${clipName(id)} in the config`, { hint: 'add it to external_drivers in config.json' });
    target.integrity = { file, sha256: actual };
  });
  return { file, sha256: actual };
}

/**
 * The environment an external driver starts with: the hub's, less what is Uplink's own business
 * (an agent's token; the conformance kit's switch, which would make a driver offer its test ops).
 */
export function driverEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const { UPLINK_AGENT_TOKEN: _token, UPLINK_DRIVER_CHECK: _check, ...rest } = env;
  return rest;
}
