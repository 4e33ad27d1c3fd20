/**
 * Witnessing other hubs' audit checkpoints: a checkpoint `{count, head, at}` signed by a member is
 * appended to `<dataDir>/fleet/witness/<hub>.jsonl`, so a hub that later rewrote its audit would
 * contradict what the others wrote down. Only signed checkpoints are witnessed: in a shared-token
 * fleet any member could write one in another's name, which would prove nothing.
 */
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Msg } from 'nats';
import { writeFileAtomic } from '../files';
import type { FleetLink } from './link';
import { decode, encode, PROTOCOL_VERSION, subjects } from './messages';

/** What the audit's checkpoint says: how many records, the hex sha256 of the chain head, when (ms). */
export interface FleetCheckpoint {
  count: number;
  head: string;
  at: number;
}

/** Lines kept per hub: the newest. */
export const MAX_WITNESS_LINES = 10_000;

export class Witness {
  readonly #link: FleetLink;
  readonly #dir: string;
  /** Lines in each hub's file, once counted. */
  #lines = new Map<string, number>();

  constructor(link: FleetLink, dataDir: string) {
    this.#link = link;
    this.#dir = join(dataDir, 'fleet', 'witness');
  }

  /** Tells the fleet this hub's audit checkpoint (signed); nothing when NATS is away. */
  publish(c: FleetCheckpoint): void {
    if (!this.#link.nc || !this.#link.connected) return;
    const hub = this.#link.name;
    try {
      this.#link.send(subjects.checkpoint(hub), encode({ v: PROTOCOL_VERSION, hub, count: c.count, head: c.head, at: c.at }));
    } catch {
      // NATS went away: the next checkpoint says more.
    }
  }

  /** Another hub's checkpoint: written down when that hub signed it. */
  heard(msg: Msg): void {
    if (!this.#link.trust.signed) return;
    const c = decode('checkpoint', msg.data);
    if (!c || msg.subject !== subjects.checkpoint(c.hub) || c.hub === this.#link.name || !this.#link.believe(msg, c.hub)) return;
    try {
      this.#append(c.hub, `${JSON.stringify({ count: c.count, head: c.head, at: c.at })}\n`);
    } catch (e) {
      this.#link.log(`witness: cannot write hub ${c.hub}'s checkpoint under ${this.#dir}: ${(e as Error).message}`);
    }
  }

  #append(hub: string, line: string): void {
    const file = join(this.#dir, `${hub}.jsonl`);
    let n = this.#lines.get(hub);
    if (n === undefined) {
      mkdirSync(this.#dir, { recursive: true, mode: 0o700 });
      n = countLines(file);
    }
    appendFileSync(file, line, { mode: 0o600 });
    n++;
    // Checkpoints are rare (one per many audit records): rewriting a full file at each is affordable, and the bound exact.
    if (n > MAX_WITNESS_LINES) {
      const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean).slice(-MAX_WITNESS_LINES);
      writeFileAtomic(file, `${lines.join('\n')}\n`);
      n = lines.length;
    }
    this.#lines.set(hub, n);
  }
}

function countLines(file: string): number {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).length;
  } catch {
    return 0;
  }
}
