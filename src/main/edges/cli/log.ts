/** `uplink log [--follow]`: reads the audit store directly (no drivers needed). */
import { existsSync } from 'node:fs';
import { AuditStore } from '../../hub/audit-store';
import { dataPaths } from '../../hub';
import type { AuditEntry, AuditQuery } from '../../hub';
import { INVOCATION_STATES } from '../../../shared/wire';
import { formatEntry, jsonForTerminal, print } from './format';

/** Options of `uplink log`. */
export interface LogOptions {
  json: boolean;
  follow: boolean;
  limit: number;
  query: AuditQuery;
}

/** What `--state` may be: an invocation state, or `rejected` (refused before it ran). */
export const LOG_STATES = [...INVOCATION_STATES, 'rejected'] as const;
/** `--limit` bound: the entries are held in memory before printing oldest-first. */
export const MAX_LOG_LIMIT = 1_000_000;

/** The newest `limit` entries matching `query`, newest first, paging past the store's page size. */
function newest(store: AuditStore, query: AuditQuery, limit: number): AuditEntry[] {
  const out: AuditEntry[] = [];
  let before: number | undefined;
  while (out.length < limit) {
    const page = store.query({ ...query, limit: Math.min(1000, limit - out.length), ...(before !== undefined ? { before } : {}) });
    out.push(...page.entries);
    if (page.next_cursor === undefined) break;
    before = page.next_cursor;
  }
  return out;
}

/** Prints the newest entries oldest-first; with `follow`, keeps printing new ones until SIGINT. */
export async function runLog(dataDir: string, options: LogOptions): Promise<number> {
  const path = dataPaths(dataDir).audit;
  if (!existsSync(path) && !options.follow) {
    print(options.json ? '' : `no audit log yet (${path})`);
    return 0;
  }
  const store = new AuditStore(path);
  const show = (entries: ReturnType<AuditStore['query']>['entries']): void => {
    for (const e of entries) print(options.json ? jsonForTerminal(e) : formatEntry(e));
  };
  try {
    const entries = newest(store, options.query, options.limit);
    show([...entries].reverse());
    if (!options.follow) return 0;
    let cursor = entries[0]?.id ?? store.lastId();
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        const next = store.query({ ...options.query, after: cursor, limit: 1000 });
        show(next.entries);
        cursor = next.next_cursor ?? cursor;
      }, 300);
      const stop = (): void => {
        clearInterval(timer);
        resolve();
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    return 0;
  } finally {
    store.close();
  }
}
