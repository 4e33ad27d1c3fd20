/**
 * What an announced hub (`uplink serve`, the desktop app) does as it starts: name, once, the calls
 * an earlier hub of this data directory left open when it was killed, each ended as `lost`.
 */
import { HubError } from '../errors';
import type { Hub } from '../hub';
import type { AuditEntry } from '../types';
import { TERMINAL_STATES } from '../../../shared/wire';

/** How the line a starting hub records about calls an earlier hub left open begins. */
const UNFINISHED = 'calls the previous hub never finished (it was killed or crashed):';
/** How far back a start looks for them: the newest entries only, so a start stays fast. */
const UNFINISHED_SCAN = 10_000;

/**
 * A hub killed mid-call (kill -9, a crash, power loss) leaves those calls open in the audit, some
 * still "waiting for the operator". The next start ends each of them, outcome `lost` (so its
 * Timeline row ends and `uplink log` says so), and says once, in one line, which calls ended with
 * that hub. Entries older than the last such line were already ended.
 */
export function recordUnfinishedCalls(hub: Hub): void {
  /** Each call's newest entry, and whether it ended the call. */
  const newest = new Map<string, { entry: AuditEntry; done: boolean }>();
  let before: number | undefined;
  scan: for (let seen = 0; seen < UNFINISHED_SCAN;) {
    const page = hub.queryAudit({ limit: 1000, ...(before !== undefined ? { before } : {}) });
    for (const e of page.entries) {
      if (e.type === 'rejected' && e.message?.startsWith(UNFINISHED)) break scan;
      // Newest first: a call's terminal event is met before its earlier ones.
      if (e.type === 'event' && e.invocation_id && !newest.has(e.invocation_id))
        newest.set(e.invocation_id, { entry: e, done: (TERMINAL_STATES as readonly string[]).includes(e.state ?? '') });
    }
    seen += page.entries.length;
    if (page.next_cursor === undefined) break;
    before = page.next_cursor;
  }
  const open = [...newest.values()].filter((c) => !c.done).reverse();
  if (open.length === 0) return;
  try {
    hub.recordLost?.(open.map((c) => c.entry));
  } catch {
    // Not written (the audit is failing, which doctor shows): the line below still names them.
  }
  const ids = open.map((c) => c.entry.invocation_id!);
  const named = ids.length > 50 ? `${ids.slice(0, 50).join(', ')} and ${ids.length - 50} more` : ids.join(', ');
  hub.recordRejected(
    { agent: { kind: 'cli', name: 'uplink serve' } },
    new HubError('core', 'Unavailable', `${UNFINISHED} ${named}`, {
      hint: 'each is recorded as lost; a call that was waiting for the operator did not run; any other may have run part-way: check its channel before retrying',
    }),
  );
}
