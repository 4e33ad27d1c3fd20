/**
 * The operator's controls over the out-of-process drivers a hub runs: their status and protocol
 * trace, admitting one by the hash the operator saw, and restarting one. Each change is recorded
 * as the operator's decision before it takes effect.
 */
import type { ExternalDriver, ExternalStatus, TraceEntry, TraceFilter } from '../../drivers';
import type { ConfigStore } from '../config';
import { HubError } from '../errors';
import { clipName } from '../../../shared/escape';
import type { AuditEntry } from '../types';
import { externalStatus, trustEntry } from './external';

/** What the admin needs of the hub. */
export interface DriverAdminHost {
  config: ConfigStore;
  dataDir: string;
  /** Records an entry (`durable`: fsynced before this returns). */
  record(entry: Omit<AuditEntry, 'id'>, durable?: boolean): void;
  now(): number;
}

/** The external drivers that run in one hub, and what the operator may do with them. */
export class ExternalDriverAdmin {
  #drivers: readonly ExternalDriver[];
  #host: DriverAdminHost;

  constructor(drivers: readonly ExternalDriver[], host: DriverAdminHost) {
    this.#drivers = drivers;
    this.#host = host;
  }

  /** Every external driver: process state, admission, restarts, last exit, recent stderr. */
  status(): Promise<ExternalStatus[]> {
    return Promise.all(this.#drivers.map((d) => externalStatus(d, this.#host.dataDir)));
  }

  trace(id: string, filter?: TraceFilter): TraceEntry[] {
    return this.#driver(id).trace(filter);
  }

  async trust(id: string, sha256: string, by: string): Promise<ExternalStatus> {
    const driver = this.#driver(id);
    const { file } = await trustEntry(this.#host.config, this.#host.dataDir, id, sha256);
    this.#decision('driver-trust', by, `external driver ${id} trusted: ${file} with sha256 ${sha256}`, { driver: id, file, sha256 });
    await driver.restart().catch(() => undefined);
    return externalStatus(driver, this.#host.dataDir);
  }

  async restart(id: string, by: string): Promise<ExternalStatus> {
    const driver = this.#driver(id);
    this.#decision('driver-restart', by, `external driver ${id} restarted`, { driver: id });
    // Why it did not come up is in the status (admission, version, stderr), which the panel shows.
    await driver.restart().catch(() => undefined);
    return externalStatus(driver, this.#host.dataDir);
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
