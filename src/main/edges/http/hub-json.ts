/**
 * `<data dir>/hub.json`: a running hub announces `{url, pid, started_at}` so `uplink mcp` can
 * forward to it, and the tmux server it runs in (`tmux_socket`, its `$TMUX`): with no socket in
 * config.json that is the server its tmux driver serves, which the CLI must not print secrets into.
 * A stale file (dead pid, or nobody answering) is ignored.
 */
import { existsSync, rmSync } from 'node:fs';
// Straight from data-dir: the CLI's fast path reads this file and must not load the hub.
import { dataPaths, pidAlive, readSmallFile, writeFileAtomic } from '../../hub';

/** What a running hub announces. */
export interface HubAnnouncement {
  url: string;
  pid: number;
  started_at: string;
  /** The socket of the tmux server the hub's process runs in (the first field of its `$TMUX`). */
  tmux_socket?: string;
}

/** hub.json is one short line; a larger file is not an announcement. */
const MAX_ANNOUNCEMENT_BYTES = 4096;

/** Writes hub.json atomically (0600). */
export function announceHub(dataDir: string, url: string): HubAnnouncement {
  const tmux = process.env.TMUX?.split(',')[0];
  const a: HubAnnouncement = { url, pid: process.pid, started_at: new Date().toISOString(), ...(tmux ? { tmux_socket: tmux } : {}) };
  const path = dataPaths(dataDir).hubJson;
  writeFileAtomic(path, `${JSON.stringify(a)}\n`, 0o600);
  return a;
}

/** Removes hub.json if it is still ours. */
export function retractHub(dataDir: string): void {
  const a = readAnnouncement(dataDir);
  if (a && a.pid === process.pid) rmSync(dataPaths(dataDir).hubJson, { force: true });
}

/** Reads hub.json (undefined when missing or unreadable). */
export function readAnnouncement(dataDir: string): HubAnnouncement | undefined {
  const path = dataPaths(dataDir).hubJson;
  if (!existsSync(path)) return undefined;
  try {
    // A FIFO or device put in its place is refused without blocking the hub or the CLI.
    const a = JSON.parse(readSmallFile(path, MAX_ANNOUNCEMENT_BYTES)) as HubAnnouncement;
    return typeof a.url === 'string' && typeof a.pid === 'number' ? a : undefined;
  } catch {
    return undefined;
  }
}

/** A running hub of this data dir: hub.json present, pid alive, `/health` answering. */
export async function findRunningHub(dataDir: string, timeoutMs = 1500): Promise<HubAnnouncement | undefined> {
  const a = readAnnouncement(dataDir);
  if (!a || !pidAlive(a.pid)) return undefined;
  try {
    const res = await fetch(new URL('/health', a.url), { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) return undefined;
    const body = (await res.json()) as { app?: string };
    return body.app === 'uplink' ? a : undefined;
  } catch {
    return undefined;
  }
}
