/**
 * The timeline's export: audit records as JSON Lines (one record per line, as `uplink log --json`
 * prints them) or CSV for a spreadsheet. A CSV cell that starts with `=`, `+`, `-`, `@` (or a tab
 * or carriage return) would run as a formula when opened: it gets a leading `'`, so an agent's
 * args can never become a formula on the operator's machine.
 */
import type { TimelineEvent } from '../shared/panel-types';

export type ExportFormat = 'jsonl' | 'csv';

/** The CSV's columns, in order: the record's fields, the agent's flattened, args as JSON. */
export const CSV_COLUMNS = [
  'id',
  'at',
  'type',
  'kind',
  'invocation_id',
  'sequence',
  'channel',
  'op',
  'agent_id',
  'agent_name',
  'provider_id',
  'interaction',
  'state',
  'outcome',
  'authorized',
  'by',
  'reason',
  'error_code',
  'error_kind',
  'message',
  'hint',
  'duration_ms',
  'args',
] as const;

/** One CSV cell: formula-guarded, quoted when it holds a quote, comma or line break. */
export function csvCell(value: unknown): string {
  if (value === undefined || value === null) return '';
  let text = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function csvRow(e: TimelineEvent): string {
  const cells: Record<(typeof CSV_COLUMNS)[number], unknown> = {
    id: e.id,
    at: new Date(e.at).toISOString(),
    type: e.type,
    kind: e.kind,
    invocation_id: e.invocation_id,
    sequence: e.sequence,
    channel: e.channel,
    op: e.op,
    agent_id: e.agent?.agent_id,
    agent_name: e.agent?.name,
    provider_id: e.provider_id,
    interaction: e.interaction,
    state: e.state,
    outcome: e.outcome,
    authorized: e.authorized,
    by: e.by,
    reason: e.reason,
    error_code: e.error_code,
    error_kind: e.error_kind,
    message: e.message,
    hint: e.hint,
    duration_ms: e.duration_ms,
    args: e.args,
  };
  return CSV_COLUMNS.map((c) => csvCell(cells[c])).join(',');
}

/** The header line a CSV export starts with. */
export const csvHeader = (): string => `${CSV_COLUMNS.join(',')}\r\n`;

/** Records in the format, each ending in its line break (CSV: CRLF, as RFC 4180 says). */
export function formatRecords(records: readonly TimelineEvent[], format: ExportFormat): string {
  if (format === 'jsonl') return records.map((r) => `${JSON.stringify(r)}\n`).join('');
  return records.map((r) => `${csvRow(r)}\r\n`).join('');
}

/** Hands a finished file to the browser as a download (tests replace it). */
export type Download = (name: string, type: string, parts: string[]) => void;

export const browserDownload: Download = (name, type, parts) => {
  const url = URL.createObjectURL(new Blob(parts, { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.rel = 'noopener';
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
};
