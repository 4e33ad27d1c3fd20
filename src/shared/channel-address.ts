/**
 * Channel addresses, parsed in one place: `<driver>:<addr>` for this hub's own channels and
 * `<hub>/<driver>:<addr>` for a fleet member's.
 */

/** A parsed channel address. */
export interface ChannelAddress {
  /** The address as written. */
  readonly channel: string;
  /** The fleet member that owns the channel; absent for this hub's own. */
  readonly hub?: string;
  readonly driver: string;
  /** What the driver is given: the part after `<driver>:`. */
  readonly addr: string;
}

/** A hub name: a lowercase letter, then lowercase letters, digits and `-`. */
export const HUB_NAME = /^[a-z][a-z0-9-]*$/;
const FLEET_PREFIX = /^([a-z][a-z0-9-]*)\//;

/** Parses `[<hub>/]<driver>:<addr>`; undefined when it is not one (no driver, or no addr). */
export function parseChannelAddress(channel: unknown): ChannelAddress | undefined {
  if (typeof channel !== 'string') return undefined;
  const prefix = FLEET_PREFIX.exec(channel);
  const local = prefix ? channel.slice(prefix[0].length) : channel;
  const colon = local.indexOf(':');
  if (colon <= 0 || colon === local.length - 1) return undefined;
  const driver = local.slice(0, colon);
  // A hub prefix counts only before the driver's colon: `tmux:a/b` is tmux's own address `a/b`.
  if (prefix && driver.includes('/')) return undefined;
  const addr = local.slice(colon + 1);
  return prefix ? { channel, hub: prefix[1]!, driver, addr } : { channel, driver, addr };
}

/** The local channel a fleet address names on its own hub (`<driver>:<addr>`). */
export function localChannel(address: ChannelAddress): string {
  return `${address.driver}:${address.addr}`;
}
