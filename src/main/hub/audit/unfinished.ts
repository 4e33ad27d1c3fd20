/**
 * What an announced hub (`uplink serve`, the desktop app) does as it starts: name, once, the calls
 * an earlier hub of this data directory left open when it was killed.
 */
import { HubError } from '../errors';
import type { Hub } from '../hub';
import { TERMINAL_STATES } from '../../../shared/wire';

/** How the line a starting hub records about calls an earlier hub left open begins. */
const UNFINISHED = 'calls the previous hub never finished (it was killed or crashed):';
/** How far back a start looks for them: the newest entries only, so a start stays fast. */
const UNFINISHED_SCAN = 10_000;

/**
 * A hub killed mid-call (kill -9, a crash, power loss) leaves those calls open in the audit, some
 * still "waiting for the operator". The next start says once, in one line, which calls ended with
 * that hub, so nobody waits for them. Entries older than the last such line were already named.
 */
export function recordUnfinishedCalls(hub: Hub): void {
  const ended = new Map<string, boolean>();
  let before: number | undefined;
  scan: for (let seen = 0; seen < UNFINISHED_SCAN;) {
    const page = hub.queryAudit({ limit: 1000, ...(before !== undefined ? { before } : {}) });
    for (const e of page.entries) {
      if (e.type === 'rejected' && e.message?.startsWith(UNFINISHED)) break scan;
      // Newest first: a call's terminal event is met before its earlier ones.
      if (e.type === 'event' && e.invocation_id && !ended.get(e.invocation_id))
        ended.set(e.invocation_id, (TERMINAL_STATES as readonly string[]).includes(e.state ?? ''));
    }
    seen += page.entries.length;
    if (page.next_cursor === undefined) break;
    before = page.next_cursor;
  }
  const open = [...ended]
    .filter(([, done]) => !done)
    .map(([id]) => id)
    .reverse();
  if (open.length === 0) return;
  const named = open.length > 50 ? `${open.slice(0, 50).join(', ')} and ${open.length - 50} more` : open.join(', ');
  hub.recordRejected(
    { agent: { kind: 'cli', name: 'uplink serve' } },
    new HubError('core', 'Unavailable', `${UNFINISHED} ${named}`, {
      hint: 'a call that was waiting for the operator did not run; any other may have run part-way: check its channel before retrying',
    }),
  );
}
