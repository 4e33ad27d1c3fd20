/** `uplink log [--follow]` without a running hub: reads the audit store directly (no drivers needed). */
import { existsSync } from 'node:fs';
import { dataPaths, openAuditReader } from '../../hub';
import type { AuditEntry } from '../../hub';
import { print } from './format';
import { logQuery, newestEntries } from './execute';
import { printEntry } from './present';
import type { CliCommands } from './request';

/** Prints the newest entries oldest-first; with `follow`, keeps printing new ones until SIGINT. */
export async function runLog(dataDir: string, args: CliCommands['log'], json: boolean): Promise<number> {
  const path = dataPaths(dataDir).audit;
  if (!existsSync(path) && !args.follow) {
    print(json ? '' : `no audit log yet (${path})`);
    return 0;
  }
  const store = await openAuditReader(path);
  const query = logQuery(args);
  const show = (entries: AuditEntry[]): void => {
    for (const e of entries) printEntry(e, json);
  };
  try {
    const entries = newestEntries((q) => store.query(q), query, args.limit);
    show([...entries].reverse());
    if (!args.follow) return 0;
    let cursor = entries[0]?.id ?? store.lastId();
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        const next = store.query({ ...query, after: cursor, limit: 1000 });
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
