/**
 * The reading side of `fleet.bench.ts`, in its own process as in a fleet (the reader is one hub's
 * panel, not the hubs that publish): either the signed history reader (`history`) or a plain core
 * NATS subscriber to the same payloads (`core`). Prints `ready` once listening; on a line
 * `{"expect": n}` on stdin it waits until n records arrived (or the drain time passed), then prints
 * one JSON line: when each record arrived (per hub, by seq: ms on the monotonic clock both processes
 * share) and what the signature check dropped.
 * Usage: node fleet-reader.mjs history|core <nats port> [<roster JSON>]
 */
import { createInterface } from 'node:readline';
import { connect } from 'nats';
import { startHistoryReader } from '../src/main/hub/fleet/history';
import { keyTrust, nk } from '../src/main/hub/fleet/keys';
import type { Roster } from '../src/main/hub/fleet/keys';

const [mode, port, rosterText] = process.argv.slice(2);
/** Longest to wait for the rest after being told how many to expect. */
const DRAIN_MS = 15_000;

/** Milliseconds on CLOCK_MONOTONIC: the same clock in every process of the machine, unlike performance.now(). */
const monotonicMs = (): number => Number(process.hrtime.bigint()) / 1e6;

/** Per hub, when each seq first arrived: numbers in arrays, so the bench's own bookkeeping adds no objects for the collector. */
const arrived: Record<string, number[]> = {};
let count = 0;
const arrive = (hub: string, seq: number, at: number): void => {
  const times = (arrived[hub] ??= []);
  if (times[seq] !== undefined) return;
  times[seq] = at;
  count++;
};
const nc = await connect({ servers: `127.0.0.1:${port}` });
let stop: () => Promise<Record<string, number>>;

if (mode === 'history') {
  const trust = keyTrust(nk.createUser(), JSON.parse(rosterText!) as Roster);
  const reader = startHistoryReader({
    nc,
    keep: 20_000,
    trust,
    onEntry: (e) => arrive(e.hub, e.seq, monotonicMs()),
  });
  stop = async () => {
    await reader.close();
    return trust.dropped();
  };
} else {
  const decoder = new TextDecoder();
  nc.subscribe('bench.core.*', {
    callback: (_e, m) => {
      const now = monotonicMs();
      const { hub, seq } = JSON.parse(decoder.decode(m.data)) as { hub: string; seq: number };
      arrive(hub, seq, now);
    },
  });
  await nc.flush();
  stop = async () => ({});
}
process.stdout.write('ready\n');

for await (const line of createInterface({ input: process.stdin })) {
  const { expect } = JSON.parse(line) as { expect: number };
  const end = Date.now() + DRAIN_MS;
  while (count < expect && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  const dropped = await stop();
  await nc.close();
  process.stdout.write(`${JSON.stringify({ arrived, dropped })}\n`, () => process.exit(0));
}
