/** Audit: the SQLite store, the journal a call's entries reach before its reply, and the timeline projection. */
export { AuditStore } from './store';
export { recordUnfinishedCalls } from './unfinished';
export { isSensitive, redactArgs } from './redact';
export { Timeline, auditUnavailable, eventEntry, startProgress } from './timeline';
export type { EntryMask, EventOutcome } from './timeline';
