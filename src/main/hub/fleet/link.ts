/** What every part of a hub's membership shares: its name in the fleet and its NATS connection. */
import type { NatsConnection } from 'nats';

export interface FleetLink {
  /** This hub's name in the fleet. */
  readonly name: string;
  /** The connection once made; it may be down meanwhile (`connected`). */
  readonly nc: NatsConnection | undefined;
  /** Whether this hub is in the fleet now. */
  readonly connected: boolean;
  /** Why this hub is not in the fleet now; undefined while it is. */
  readonly problem: string | undefined;
  /** One line per fleet event; never the token. */
  log(line: string): void;
}
