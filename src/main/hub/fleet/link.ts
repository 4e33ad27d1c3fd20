/** What every part of a hub's membership shares: its name in the fleet, its NATS connection, and how it signs and checks messages. */
import type { NatsConnection } from 'nats';
import type { FleetTrust } from './keys';

/** A message as it arrived (live, or read back from the stream): where, what, and its envelope. */
export interface Received {
  subject: string;
  data: Uint8Array;
  headers?: { get(key: string): string } | undefined;
}

export interface FleetLink {
  /** This hub's name in the fleet. */
  readonly name: string;
  /** The connection once made; it may be down meanwhile (`connected`). */
  readonly nc: NatsConnection | undefined;
  /** Whether this hub is in the fleet now. */
  readonly connected: boolean;
  /** Why this hub is not in the fleet now; undefined while it is. */
  readonly problem: string | undefined;
  /** Signs what this hub sends, checks what it hears (unsigned in a shared-token fleet). */
  readonly trust: FleetTrust;
  /** This hub's inbox prefix: only it may subscribe under it when the fleet has a roster. */
  readonly inboxPrefix: string | undefined;
  /** Publishes `data` on `subject`, signed; throws when the connection is closed. */
  send(subject: string, data: Uint8Array, reply?: string): void;
  /**
   * Whether `msg` speaks for `hub`: signed by `hub`'s key (any member's message in a shared-token
   * fleet). A message that does not is counted by reason; the caller drops it.
   */
  believe(msg: Received, hub: string, live?: boolean): boolean;
  /** One line per fleet event; never the token. */
  log(line: string): void;
}

/** `believe` for a link's trust. */
export function believeWith(trust: FleetTrust, msg: Received, hub: string, live = true): boolean {
  if (!trust.signed) return true;
  const opened = trust.open(msg.subject, msg.data, msg.headers, live);
  if (!opened.ok) return false;
  if (opened.hub !== hub) {
    trust.drop('wrong_signer');
    return false;
  }
  return true;
}
