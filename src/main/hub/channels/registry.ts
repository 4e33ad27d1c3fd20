/**
 * The channel registry: routes `<driver>:<addr>` to drivers, lists channels and ops, and resolves
 * labels (`tmux:codex`) to their channel entry. Metadata calls (channels, doctor) get a deadline
 * too, so one hanging driver cannot stall the hub.
 */
import type { InteractionKind } from '../../kernel';
import { ExternalDriver, isMutating } from '../../drivers';
import type { ChannelEntry, DoctorReport, Driver, OpSpec } from '../../drivers';
import { HubError, isDriverError, LIST_CHANNELS_HINT, toHubError } from '../errors';
import { messagingOps, RESERVED_OPS } from './driver-provider';
import type { DriverOverview, OpDescription } from '../types';
import { parseChannelAddress } from '../../../shared/channel-address';
import type { ChannelAddress } from '../../../shared/channel-address';
import { clipName } from '../../../shared/escape';

/** How long a listing may stay cached before a miss forces a refresh. */
const CHANNEL_CACHE_MS = 1000;
/**
 * The bound of one driver's doctor: all run at once, so `uplink doctor` answers within about this
 * long however many drivers hang (a health check that waits out a stuck driver helps nobody).
 */
export const DOCTOR_TIMEOUT_MS = 2000;

/** Runs `work` with a deadline; a late driver is `Timeout`. */
export async function withDeadline<T>(driver: string, what: string, ms: number, work: () => Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new HubError(driver, 'Timeout', `${driver} did not answer ${what} within ${Math.round(ms / 1000)} s`, {
            hint: 'run `uplink doctor`; the driver may be stuck',
          }),
        ),
      ms,
    );
  });
  try {
    return await Promise.race([work(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A driver's failure bound to its id (`toHubError` takes a channel, and `notes:` names none: the
 * error would read `[core:…]`).
 */
function ofDriver(id: string, e: unknown): HubError {
  return isDriverError(e) && !(e instanceof HubError) ? new HubError(id, e.kind, e.message, { hint: e.hint, evidence: e.evidence }) : toHubError(undefined, e);
}

/** Normalizes an OpSpec into what the hub describes. */
export function describeOp(driver: string, op: OpSpec): OpDescription {
  const mutating = isMutating(op);
  const tool = op.op === 'send' ? 'channel_send' : op.op === 'recv' ? 'channel_recv' : mutating ? 'channel_act' : 'channel_observe';
  return {
    ...op,
    mutating,
    capability_id: `${driver}.${op.op}`,
    tool,
    interactions: (op.interactions?.length ? op.interactions : ['typed']) as InteractionKind[],
  };
}

/** Drivers by id, with cached channel listings. */
export class ChannelRegistry {
  #drivers = new Map<string, Driver>();
  #ops = new Map<string, OpDescription[]>();
  #cache = new Map<string, { at: number; entries: ChannelEntry[] }>();
  #metaTimeoutMs: () => number;

  constructor(drivers: Driver[], metaTimeoutMs: () => number) {
    this.#metaTimeoutMs = metaTimeoutMs;
    for (const d of drivers) {
      const id = d.info().id;
      if (this.#drivers.has(id)) throw new Error(`two drivers named ${id}`);
      this.#drivers.set(id, d);
      this.refresh(id);
    }
  }

  /** Re-reads a driver's ops (an out-of-process driver knows them only once it has started). */
  refresh(id: string): void {
    const d = this.#drivers.get(id);
    if (!d) return;
    const own = d.ops().filter((o) => !(RESERVED_OPS as readonly string[]).includes(o.op));
    this.#ops.set(
      id,
      [...own, ...messagingOps(d)].map((o) => describeOp(id, o)),
    );
  }

  /** Starts the channel's driver when it runs out of process and is not up, so its ops are known. */
  async ready(channel: string): Promise<void> {
    const { driver } = this.resolve(channel);
    if (!(driver instanceof ExternalDriver)) return;
    try {
      await driver.ensureStarted();
    } catch (e) {
      throw toHubError(channel, e);
    }
  }

  /** All drivers, in registration order. */
  drivers(): Array<{ id: string; driver: Driver }> {
    return [...this.#drivers].map(([id, driver]) => ({ id, driver }));
  }

  /** The ops of a driver, including the hub's messaging ops. */
  opsOf(driverId: string): OpDescription[] {
    return this.#ops.get(driverId) ?? [];
  }

  /** The driver for a channel address (`NotFound` for a bad address or unknown driver). */
  resolve(channel: string): { id: string; driver: Driver; addr: string; address: ChannelAddress } {
    const address = parseChannelAddress(channel);
    if (!address) {
      throw new HubError('core', 'NotFound', `"${clipName(channel)}" is not a channel address (<driver>:<addr>)`, { hint: LIST_CHANNELS_HINT });
    }
    // This hub's registry routes its own channels only: a fleet address names no local driver.
    const id = address.hub === undefined ? address.driver : `${address.hub}/${address.driver}`;
    const driver = address.hub === undefined ? this.#drivers.get(id) : undefined;
    if (!driver) {
      const known = [...this.#drivers.keys()].join(', ') || 'none';
      throw new HubError(id, 'NotFound', `no driver named ${clipName(id)} (enabled drivers: ${known})`, { hint: LIST_CHANNELS_HINT });
    }
    return { id, driver, addr: address.addr, address };
  }

  /** One op of a channel's driver (`NotFound` naming the valid ops). */
  op(channel: string, op: string): OpDescription {
    const { id } = this.resolve(channel);
    const found = this.opsOf(id).find((o) => o.op === op);
    if (!found) {
      const names = this.opsOf(id)
        .map((o) => o.op)
        .join(', ');
      throw new HubError(id, 'NotFound', `${id} has no op "${clipName(op)}" (ops: ${names})`, {
        hint: `describe the channel with channel_describe {channel: "${clipName(channel)}"}`,
      });
    }
    return found;
  }

  /** A driver's channels (bounded in time, errors as HubError). */
  async channelsOf(id: string): Promise<ChannelEntry[]> {
    const driver = this.#drivers.get(id)!;
    try {
      const entries = await withDeadline(id, 'channels()', this.#metaTimeoutMs(), () => driver.channels());
      this.#cache.set(id, { at: Date.now(), entries });
      return entries;
    } catch (e) {
      throw ofDriver(id, e);
    }
  }

  /** The channel entry for an address or a label (`NotFound` with the hint to list channels). */
  async find(channel: string): Promise<ChannelEntry> {
    const { id, addr } = this.resolve(channel);
    const match = (entries: ChannelEntry[]): ChannelEntry | undefined =>
      entries.find((e) => e.channel === channel) ?? entries.find((e) => e.labels.includes(addr));
    const cached = this.#cache.get(id);
    if (cached && Date.now() - cached.at < CHANNEL_CACHE_MS) {
      const hit = match(cached.entries);
      if (hit) return hit;
    }
    const hit = match(await this.channelsOf(id));
    if (hit) return hit;
    throw new HubError(id, 'NotFound', `no channel ${clipName(channel)}`, { hint: LIST_CHANNELS_HINT });
  }

  /** A driver's doctor report; a failing or hanging doctor is reported as not ok. */
  async doctorOf(id: string): Promise<DoctorReport> {
    const driver = this.#drivers.get(id)!;
    const ms = Math.min(DOCTOR_TIMEOUT_MS, this.#metaTimeoutMs());
    try {
      return await withDeadline(id, 'doctor()', ms, () => driver.doctor());
    } catch (e) {
      if (isDriverError(e) && e.kind === 'Timeout') {
        const late = new HubError(id, 'Unavailable', `${id} is not responding: it did not answer doctor within ${ms / 1000} s`, {
          hint: 'it may be stopped or stuck: see the Drivers view in the panel, or `uplink drivers` (an out-of-process driver restarts with `uplink drivers restart <id>`)',
        });
        return { driver: id, ok: false, lines: [late.rendered] };
      }
      const msg = isDriverError(e) ? ofDriver(id, e).rendered : 'doctor() failed unexpectedly';
      return { driver: id, ok: false, lines: [msg] };
    }
  }

  /** Every driver with info, health and channels (a failing listing is reported in `error`). */
  async overview(): Promise<DriverOverview[]> {
    return Promise.all(
      this.drivers().map(async ({ id, driver }) => {
        const [health, listed] = await Promise.all([
          this.doctorOf(id),
          this.channelsOf(id).then(
            (c) => ({ c }),
            (e: unknown) => ({ e: ofDriver(id, e).rendered }),
          ),
        ]);
        const view: DriverOverview = { driver: id, info: driver.info(), health, channels: 'c' in listed ? listed.c : [] };
        if ('e' in listed) view.error = listed.e;
        return view;
      }),
    );
  }

  /** Every channel of every driver; a driver that fails to list contributes none. */
  async listAll(): Promise<ChannelEntry[]> {
    const all = await Promise.all(this.drivers().map(({ id }) => this.channelsOf(id).catch(() => [] as ChannelEntry[])));
    return all.flat();
  }

  /** A channel and its ops (or one op). */
  async describe(channel: string, op?: string): Promise<{ channel: ChannelEntry; ops: OpDescription[] }> {
    await this.ready(channel);
    const entry = await this.find(channel);
    if (op !== undefined) return { channel: entry, ops: [this.op(channel, op)] };
    return { channel: entry, ops: this.opsOf(this.resolve(channel).id) };
  }
}
