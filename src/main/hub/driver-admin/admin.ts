/**
 * The operator's controls over the out-of-process drivers a hub runs: their status and protocol
 * trace, admitting one by the hash the operator saw, and restarting one. Each change is recorded
 * as the operator's decision before it takes effect.
 *
 * A driver is also admitted by an `integrity` written into config.json by hand, with no trust
 * step: each such admission is recorded ("admitted by config") before the driver first runs it in
 * this hub, and the driver's status says which of the two admitted it.
 */
import type { ExternalDriver, ExternalStatus, Integrity, RestartProgress, TraceEntry, TraceFilter } from '../../drivers';
import type { ConfigStore, ExternalDriverEntry } from '../config';
import { HubError } from '../errors';
import { clipName } from '../../../shared/escape';
import type { AuditEntry, AuditPage, AuditQuery } from '../types';
import { externalStatus, trustEntry } from './external';

/** What the admin needs of the hub. */
export interface DriverAdminHost {
  config: ConfigStore;
  dataDir: string;
  /** Records an entry (`durable`: fsynced before this returns). */
  record(entry: Omit<AuditEntry, 'id'>, durable?: boolean): void;
  /** Reads the audit (the operator's earlier trust of a driver). */
  query(q: AuditQuery): AuditPage;
  now(): number;
  /** Entries of `external_drivers` that `hub.drivers` leaves out: listed, never started. */
  leftOut?: readonly ExternalDriverEntry[];
}

/** Who admitted what a driver runs now. */
type AdmittedBy = NonNullable<ExternalStatus['admitted_by']>;

/** The external drivers that run in one hub, and what the operator may do with them. */
export class ExternalDriverAdmin {
  #drivers: readonly ExternalDriver[];
  #host: DriverAdminHost;
  /** Per driver: the file and hash last admitted in this hub, and by whom. */
  #admitted = new Map<string, Integrity & { by: AdmittedBy }>();

  constructor(drivers: readonly ExternalDriver[], host: DriverAdminHost) {
    this.#drivers = drivers;
    this.#host = host;
  }

  /** Every external driver: process state, admission, restarts, last exit, recent stderr. */
  async status(): Promise<ExternalStatus[]> {
    const running = await Promise.all(this.#drivers.map((d) => this.#status(d)));
    return [...running, ...(this.#host.leftOut ?? []).map(leftOutStatus)];
  }

  trace(id: string, filter?: TraceFilter): TraceEntry[] {
    return this.#driver(id).trace(filter);
  }

  async trust(id: string, sha256: string, by: string): Promise<ExternalStatus> {
    const driver = this.#driver(id);
    await trustEntry(this.#host.config, this.#host.dataDir, id, sha256, (trusted) => {
      this.#decision('driver-trust', by, `external driver ${id} trusted: ${trusted.file} with sha256 ${trusted.sha256}`, { driver: id, ...trusted });
      this.#admitted.set(id, { ...trusted, by: 'operator' });
    });
    await driver.restart().catch(() => undefined);
    return this.#status(driver);
  }

  async restart(id: string, by: string, progress?: RestartProgress): Promise<ExternalStatus> {
    const driver = this.#driver(id);
    this.#decision('driver-restart', by, `external driver ${id} restarted`, { driver: id });
    // Why it did not come up is in the status (admission, version, stderr), which the panel shows.
    await driver.restart(progress).catch(() => undefined);
    return this.#status(driver);
  }

  /**
   * A start of driver `id` was admitted by `integrity` (the host calls this before it spawns): an
   * admission no operator's trust in the audit accounts for is the config's, and is recorded the
   * first time this hub admits that file and hash.
   */
  admitted(id: string, integrity: Integrity): void {
    const sha256 = integrity.sha256.toLowerCase();
    const known = this.#admitted.get(id);
    if (known && known.file === integrity.file && known.sha256 === sha256) return;
    const by: AdmittedBy = this.#operatorTrusted(id, integrity.file, sha256) ? 'operator' : 'config';
    if (by === 'config')
      this.#host.record(
        {
          at: this.#host.now(),
          type: 'decision',
          kind: 'decision',
          op: 'driver-admit',
          by: 'config',
          reason: `external driver ${id} admitted by config: ${integrity.file} with sha256 ${sha256} (written into config.json, not trusted by the operator)`,
          granted: true,
          args: { driver: id, file: integrity.file, sha256 },
        },
        true,
      );
    this.#admitted.set(id, { file: integrity.file, sha256, by });
  }

  /** Whether the audit holds the operator's trust of exactly this file and hash for driver `id`. */
  #operatorTrusted(id: string, file: string, sha256: string): boolean {
    let before: number | undefined;
    for (;;) {
      const page = this.#host.query({ op: 'driver-trust', type: 'decision', text: sha256, limit: 1000, ...(before !== undefined ? { before } : {}) });
      const found = page.entries.some((e) => {
        // The operator's own record: never an agent's call (an external driver may name an op "driver-trust").
        if (e.invocation_id || e.channel || e.authorized !== 'operator' || e.granted !== true) return false;
        const args = e.args as Record<string, unknown> | undefined;
        return args?.driver === id && args.file === file && args.sha256 === sha256;
      });
      if (found) return true;
      if (page.next_cursor === undefined) return false;
      before = page.next_cursor;
    }
  }

  /** The host's status, with the file to trust when untrusted, and who admitted what it runs. */
  async #status(driver: ExternalDriver): Promise<ExternalStatus> {
    const status = await externalStatus(driver, this.#host.dataDir);
    const admitted = this.#admitted.get(driver.id);
    if (status.admission !== 'admitted' || !admitted) return status;
    const { file, actual } = status.integrity;
    return file === admitted.file && actual === admitted.sha256 ? { ...status, admitted_by: admitted.by } : status;
  }

  #decision(op: string, by: string, reason: string, args: Record<string, string>): void {
    this.#host.record({ at: this.#host.now(), type: 'decision', kind: 'decision', op, authorized: 'operator', by, reason, granted: true, args }, true);
  }

  #driver(id: string): ExternalDriver {
    const driver = this.#drivers.find((d) => d.id === id);
    if (!driver)
      throw new HubError(
        'core',
        'NotFound',
        `no external driver ${clipName(id)} runs in this hub (external: ${this.#drivers.map((d) => d.id).join(', ') || 'none'})`,
        {
          hint: 'add it to external_drivers (and hub.drivers, when present) in config.json and restart the hub',
        },
      );
    return driver;
  }
}

/** A configured driver that `hub.drivers` leaves out, as `uplink drivers` and the panel list it. */
function leftOutStatus(entry: ExternalDriverEntry): ExternalStatus {
  return {
    id: entry.id,
    command: [...entry.command],
    state: 'off',
    extensions: [],
    restarts: 0,
    admission: 'unchecked',
    integrity: {},
    error: `left out by hub.drivers in config.json — hint: add "${entry.id}" to hub.drivers and restart the hub`,
    in_flight: 0,
    stderr: [],
  };
}
