/** Audit: the SQLite store (hash-chained, with signed checkpoints), the journal a call's entries reach before its reply, the timeline projection, and verify. */
export { AuditStore } from './store';
export { recordUnfinishedCalls } from './unfinished';
export { isSensitive, redactArgs } from './redact';
export { Timeline, auditUnavailable, eventEntry, startProgress } from './timeline';
export type { EntryMask, EventOutcome } from './timeline';
/** A signed checkpoint of the audit's hash chain; hear new ones with `AuditStore.onCheckpoint` (→ unsubscribe). */
export type { AuditCheckpoint } from './checkpoints';
export type { AuditFinding, AuditVerifyReport } from './verify';
