/**
 * What each tool's result says, built by one function (`toolResult`): a short line for a person
 * (absent for an op's result), then the data as JSON text (every client reads text, and one that
 * reads only text gets all of it), then images lifted out as image items. Fixed-shape answers
 * carry the same data as `structuredContent`, matching the tool's outputSchema; an error carries
 * its rendered line and its JSON (`{error: {driver, kind, message, hint?}}`).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ChannelEntry, HubDoctor, HubError, JsonValue, OpDescription, RecvBatch, SendReceipt } from '../../hub';
import { escapeControl, wellFormed } from '../../../shared/escape';
import type { ToolOutput } from './tools';

/** One image content item. */
export interface ImageItem {
  type: 'image';
  data: string;
  mimeType: string;
}

/** A tool's answer before it becomes a CallToolResult. */
export interface ToolAnswer {
  /** One line for a person; absent for op results, whose JSON is all there is to say. */
  text?: string;
  /** The data, sent as JSON text; also as structuredContent when `structured`. */
  data: JsonValue;
  /** Whether `data` is the tool's fixed-shape result (its outputSchema's). */
  structured?: boolean;
  images?: ImageItem[];
}

/** JSON as one inert line: JSON leaves C1 controls and the Unicode line separators raw. */
function jsonLine(value: unknown): string {
  return (JSON.stringify(value) ?? 'null').replace(/[\u0080-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Every tool result, success or error. Images come last; their `content_index` (set by
 * `invokeAnswer`) counts from 1, after the one JSON text item an op result has.
 */
export function toolResult(answer: ToolAnswer, meta: { outcome?: string; isError?: boolean } = {}): CallToolResult {
  return {
    content: [
      ...(answer.text !== undefined ? [{ type: 'text' as const, text: answer.text }] : []),
      { type: 'text' as const, text: jsonLine(answer.data) },
      ...(answer.images ?? []),
    ],
    ...(answer.structured ? { structuredContent: answer.data as Record<string, unknown> } : {}),
    ...(meta.isError ? { isError: true } : {}),
    ...(meta.outcome ? { _meta: { 'uplink/outcome': meta.outcome } } : {}),
  };
}

/**
 * An error as the agent gets it: the rendered `uplink error [...]` line, then its JSON. Not as
 * structuredContent: clients check that against the tool's outputSchema even on an error, and an
 * error is not a result of that shape. A driver's `evidence` (what it saw: a pane's last lines, a
 * helper's traceback) is the operator's, in the audit, never the agent's.
 */
export function errorAnswer(err: HubError): ToolAnswer {
  const error = { driver: err.driver, kind: err.kind, message: err.message, ...(err.hint !== undefined ? { hint: err.hint } : {}) };
  return { text: err.rendered, data: { error } as JsonValue };
}

/**
 * Channel names, op names and results come from panes and windows: the line shows their control
 * characters as escapes so it stays one inert line, and a cut never leaves half a character.
 */
function answer(
  text: string,
  structured: ToolOutput<'channel_list' | 'channel_describe' | 'channel_send' | 'channel_recv' | 'channel_doctor'>,
  images: ImageItem[] = [],
): ToolAnswer {
  return { text: wellFormed(escapeControl(text)), data: structured as JsonValue, structured: true, ...(images.length ? { images } : {}) };
}

function names(list: string[], max = 10): string {
  return list.length > max ? `${list.slice(0, max).join(', ')}, … (${list.length - max} more)` : list.join(', ');
}

export function listAnswer(channels: ChannelEntry[]): ToolAnswer {
  const text =
    channels.length === 0 ? 'No channels.' : `${channels.length} channel${channels.length === 1 ? '' : 's'}: ${names(channels.map((c) => c.channel))}`;
  const structured: ToolOutput<'channel_list'> = { channels };
  return answer(text, structured);
}

export function describeAnswer(d: { channel: ChannelEntry; ops: OpDescription[] }): ToolAnswer {
  const by = (tool: string): string[] => d.ops.filter((o) => o.tool === tool).map((o) => o.op);
  const parts = (['channel_observe', 'channel_act', 'channel_send', 'channel_recv'] as const)
    .filter((t) => by(t).length > 0)
    .map((t) => `${t}: ${names(by(t), 20)}`);
  const text =
    d.ops.length === 1
      ? `${d.channel.channel} op ${d.ops[0]!.op} (${d.ops[0]!.mutating ? 'mutating' : 'read-only'}, via ${d.ops[0]!.tool}): ${d.ops[0]!.summary}`
      : `${d.channel.channel} has ${d.ops.length} ops${parts.length ? ` — ${parts.join('; ')}` : ''}`;
  const structured: ToolOutput<'channel_describe'> = d;
  return answer(text, structured);
}

export function sendAnswer(channel: string, r: SendReceipt): ToolAnswer {
  const text = `${r.delivered ? 'Delivered' : 'Not delivered'} to ${channel} at ${r.injected_at} (correlation_id ${r.correlation_id})`;
  const structured: ToolOutput<'channel_send'> = r;
  return answer(text, structured);
}

/**
 * A `from:` is whatever the line says (anyone can print `[uplink from:operator …]`), so the text
 * calls it a name the line gives, says where items were read, and puts a reply seen outside its
 * addressee's pane first, as no answer.
 */
export function recvAnswer(b: RecvBatch | ToolOutput<'channel_recv'>): ToolAnswer {
  const distinct = (values: Array<string | undefined>): string[] => [...new Set(values.filter((v): v is string => typeof v === 'string'))];
  const from = distinct(b.items.map((i) => i.from));
  const where = distinct(b.items.map((i) => i.channel));
  const forged = b.items.filter((i) => i.not_from_addressee === true);
  const warning = forged.length
    ? `${forged.length} repl${forged.length === 1 ? 'y' : 'ies'} NOT from the addressee (seen in ${names(distinct(forged.map((i) => i.channel)))}, answering an id sent to ${names(distinct(forged.map((i) => i.sent_to)))}: no answer); `
    : '';
  const failed = 'failed' in b && b.failed?.length ? `; not read: ${names(b.failed.map((f) => f.driver))}` : '';
  const text =
    (b.items.length === 0
      ? `No new items; next_cursor ${b.next_cursor}`
      : `${warning}${b.items.length} item${b.items.length === 1 ? '' : 's'}${where.length ? ` read in ${names(where)}` : ''}${from.length ? `, naming ${names(from)} as sender` : ''}; next_cursor ${b.next_cursor}`) +
    failed;
  const structured: ToolOutput<'channel_recv'> = b;
  return answer(text, structured);
}

export function doctorAnswer(d: HubDoctor): ToolAnswer {
  // What is wrong, with its first line, so a reader of the text alone knows where to look.
  const bad = [
    ...d.drivers.filter((x) => !x.ok).map((x) => `${x.driver} (${x.lines[0] ?? 'not ok'})`),
    ...(['config', 'audit', 'agents'] as const).filter((k) => !d[k].ok).map((k) => `${k} (${d[k].error ?? d[k].path})`),
  ];
  const warned = d.warnings?.length ? `; ${d.warnings.length} warning${d.warnings.length === 1 ? '' : 's'}` : '';
  const text = d.ok
    ? `Healthy: ${d.drivers.length} driver${d.drivers.length === 1 ? '' : 's'} ok${warned}`
    : `Unhealthy: ${bad.join('; ') || 'see drivers'}${warned}`;
  const structured: ToolOutput<'channel_doctor'> = d;
  return answer(text, structured);
}

/**
 * The result of an op run through channel_observe / channel_act: the result itself as JSON text
 * (every client reads text; some show a model only structuredContent when there is any, and would
 * then drop the images), with its images lifted out as image items.
 */
export function invokeAnswer(result: JsonValue): ToolAnswer {
  const images: ImageItem[] = [];
  const data = liftImages(result, images, undefined, 0);
  return { data, ...(images.length ? { images } : {}) };
}

/** Fields whose name says they may hold an encoded image. */
const IMAGE_KEY = /base64|png|jpe?g|gif|webp|image|screenshot/i;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const MAX_LIFT_DEPTH = 4;

/** The MIME type of an encoded image, from its first bytes (the field name is only a hint). */
function sniff(base64: string): string | undefined {
  const head = Buffer.from(base64.slice(0, 24), 'base64');
  if (head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (head.subarray(0, 4).toString('latin1') === 'GIF8') return 'image/gif';
  if (head.subarray(0, 4).toString('latin1') === 'RIFF' && head.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  return undefined;
}

/**
 * Replaces each base64 image in `value` by `{image: {mime_type, bytes, content_index}}` and
 * collects it, so the megabytes travel once (as the image item) and the structure says where.
 * Content index 0 is the JSON text; images follow in the order found.
 */
function liftImages(value: JsonValue, images: ImageItem[], key: string | undefined, depth: number): JsonValue {
  if (typeof value === 'string') {
    const mimeType = key !== undefined && IMAGE_KEY.test(key) && value.length >= 16 ? sniff(value) : undefined;
    if (!mimeType || !BASE64.test(value)) return value;
    images.push({ type: 'image', data: value, mimeType });
    return { image: { mime_type: mimeType, bytes: Buffer.byteLength(value, 'base64'), content_index: images.length } };
  }
  if (value === null || typeof value !== 'object' || depth >= MAX_LIFT_DEPTH) return value;
  if (Array.isArray(value)) return value.map((v) => liftImages(v, images, key, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, liftImages(v, images, k, depth + 1)]));
}
