/** `uplink log [--follow]`: reads the audit store directly (no drivers needed). */
import { existsSync } from 'node:fs';
import { AuditStore } from '../../hub/audit-store';
import { dataPaths } from '../../hub';
import type { AuditQuery } from '../../hub';
import { formatEntry, print } from './format';

/** Options of `uplink log`. */
export interface LogOptions {
  json: boolean;
  follow: boolean;
  limit: number;
  query: AuditQuery;
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
    for (const e of entries) print(options.json ? JSON.stringify(e) : formatEntry(e));
  };
  try {
    const page = store.query({ ...options.query, limit: options.limit });
    show([...page.entries].reverse());
    if (!options.follow) return 0;
    let cursor = page.entries[0]?.id ?? store.lastId();
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
