/** Out-of-process drivers: their status, protocol trace, admission (trust) and restart. */
import type { DriverProcessStatus } from '../../shared/panel-types';
import { getApi } from '../api';
import { get, load, message, set, toast } from './common';
import { loadChannels } from './views';

/** The host keeps its last 1000 messages; the panel keeps no more than that per driver. */
const TRACE_KEEP = 1000;

export async function loadDrivers(): Promise<void> {
  await load(
    (list) => set((s) => ({ drivers: { ...s.drivers, list } })),
    () => get().drivers.list,
    () => getApi().driverStatus(),
  );
}

/** Fetches the trace messages newer than those already read. */
export async function pollTrace(driver: string): Promise<void> {
  const known = get().drivers.trace[driver] ?? [];
  const after = known.at(-1)?.seq;
  try {
    const fresh = await getApi().driverTrace({ driver, ...(after !== undefined ? { after } : {}), limit: 500 });
    if (fresh.length === 0) return;
    set((s) => ({ drivers: { ...s.drivers, trace: { ...s.drivers.trace, [driver]: [...(s.drivers.trace[driver] ?? []), ...fresh].slice(-TRACE_KEEP) } } }));
  } catch {
    // The status shows why a driver cannot be read; the trace just stays as it was.
  }
}

function replaceStatus(status: DriverProcessStatus): void {
  set((s) => ({ drivers: { ...s.drivers, list: { loading: false, data: (s.drivers.list.data ?? []).map((d) => (d.id === status.id ? status : d)) } } }));
}

/**
 * Admits a driver with the hash the operator was shown. Resolves with the hub's refusal (e.g. the
 * file changed since) for the prompt to show, or undefined when it was trusted.
 */
export async function trustDriver(driver: string, sha256: string): Promise<string | undefined> {
  try {
    replaceStatus(await getApi().trustDriver({ driver, sha256 }));
    toast('info', `${driver} trusted`);
    void loadChannels();
    return undefined;
  } catch (error) {
    // The refusal may mean the file changed: show its hash as it is now.
    void loadDrivers();
    return message(error);
  }
}

/** Restarts a driver; resolves with its status after the restart, or the hub's refusal in words. */
export async function restartDriver(driver: string): Promise<DriverProcessStatus | string> {
  try {
    const status = await getApi().restartDriver({ driver });
    replaceStatus(status);
    return status;
  } catch (error) {
    return message(error);
  }
}
