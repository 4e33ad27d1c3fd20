/**
 * The JSON-RPC 2.0 envelope of what an MCP client sends, checked before the SDK sees it, the same
 * way on stdio and on HTTP. The SDK's own parse step answers nothing on stdio (it reports to
 * `onerror` and drops the line) and calls every bad message a parse error with id null on HTTP;
 * here each gets its JSON-RPC code and, when it can be read, its id:
 * - -32700 parse error (id null): not JSON;
 * - -32600 invalid request: not a message object, `jsonrpc` not "2.0", an id neither a string nor
 *   an integer (answered with id null), no method where there is an id, params neither an object
 *   nor an array, an empty batch, or anything else the MCP message shapes do not allow;
 * - -32602 invalid params: params as an array (valid JSON-RPC, but every MCP method takes an object).
 * Method-not-found (-32601) and a method's own params (-32602) are the SDK's, past this step; a tool's
 * arguments failing its input schema are a tool error (`isError`), which the MCP spec asks for so a
 * model can correct itself. A malformed notification (a method, no id) gets no reply, as JSON-RPC
 * says; a malformed response (result or error, from a client answering the server) neither.
 */
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import type { JSONRPCErrorResponse, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { HubError } from '../../hub';
import { clipName } from '../../../shared/escape';

export const RPC_CODES = { parseError: -32700, invalidRequest: -32600, methodNotFound: -32601, invalidParams: -32602 } as const;

/** One message checked: the message to hand on, or the error answering it (`reply: false`: answer nothing). */
export type Checked = { message: JSONRPCMessage } | { error: JSONRPCErrorResponse; reply: boolean };

const HINT = 'send one JSON-RPC 2.0 message: {"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}';

function rpcError(code: number, id: string | number | null, detail: string): JSONRPCErrorResponse {
  // The SDK's type has no null id; JSON-RPC answers with null what it could not read.
  return { jsonrpc: '2.0', id: id as string | number, error: { code, message: new HubError('core', 'Invalid', detail, { hint: HINT }).rendered } };
}

/** A line or body that is not JSON. */
export function parseError(): JSONRPCErrorResponse {
  return rpcError(RPC_CODES.parseError, null, 'Parse error: the message is not valid JSON');
}

/** Checks one message (already parsed from JSON). */
export function checkMessage(value: unknown): Checked {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { error: rpcError(RPC_CODES.invalidRequest, null, 'Invalid Request: a message is a JSON object'), reply: true };
  }
  const m = value as Record<string, unknown>;
  const hasId = 'id' in m && m.id !== undefined;
  const readableId = typeof m.id === 'string' || (typeof m.id === 'number' && Number.isSafeInteger(m.id));
  const id = readableId ? (m.id as string | number) : null;
  const response = !('method' in m) && hasId && ('result' in m || 'error' in m);
  // A notification (a method and no id) is never answered, nor is a client's answer to the server.
  const reply = !response && (hasId || typeof m.method !== 'string');
  const fail = (code: number, detail: string): Checked => ({ error: rpcError(code, id, detail), reply });
  if (m.jsonrpc !== '2.0')
    return fail(RPC_CODES.invalidRequest, `Invalid Request: jsonrpc must be "2.0", not ${clipName(JSON.stringify(m.jsonrpc) ?? 'absent')}`);
  if (hasId && !readableId) return fail(RPC_CODES.invalidRequest, 'Invalid Request: id must be a string or an integer');
  if (!response) {
    if (typeof m.method !== 'string') return fail(RPC_CODES.invalidRequest, 'Invalid Request: method must be a string');
    if ('params' in m && (m.params === null || typeof m.params !== 'object'))
      return fail(RPC_CODES.invalidRequest, 'Invalid Request: params must be an object or an array');
    if (Array.isArray(m.params)) return fail(RPC_CODES.invalidParams, `Invalid params: ${clipName(m.method)} takes its params as an object`);
  }
  const parsed = JSONRPCMessageSchema.safeParse(value);
  if (parsed.success) return { message: parsed.data };
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? issue.path.map(String).join('/') : undefined;
  // The union's issue says only that no shape matched: an unexpected member is the usual cause.
  const extra = Object.keys(m).filter((k) => !['jsonrpc', 'id', 'method', 'params', 'result', 'error'].includes(k));
  const detail = extra.length
    ? `unexpected member ${clipName(extra[0])}`
    : `${where ? `${where}: ` : ''}${issue?.message.replace(/\s+/g, ' ').slice(0, 200) ?? 'not a request, notification or response'}`;
  return fail(RPC_CODES.invalidRequest, `Invalid Request: ${detail}`);
}

/**
 * A body or line, one message or a batch: the messages to hand on, or why it is refused (a batch
 * with one bad message is refused whole: its good requests would otherwise run with nobody to hear
 * that the batch failed). `answer` is what JSON-RPC answers: the error, the batch's errors, or
 * nothing (a malformed notification); `error` is the first error even then, for a transport that
 * must answer something (HTTP), with id null.
 */
export type CheckedBody = { messages: JSONRPCMessage[] } | { answer: JSONRPCErrorResponse | JSONRPCErrorResponse[] | undefined; error: JSONRPCErrorResponse };

/** Checks what a client sent (parsed JSON). */
export function checkBody(value: unknown): CheckedBody {
  if (!Array.isArray(value)) {
    const c = checkMessage(value);
    if ('message' in c) return { messages: [c.message] };
    return { answer: c.reply ? c.error : undefined, error: c.reply ? c.error : { ...c.error, id: null as unknown as string } };
  }
  if (value.length === 0) {
    const error = rpcError(RPC_CODES.invalidRequest, null, 'Invalid Request: an empty batch');
    return { answer: error, error };
  }
  const checked = value.map(checkMessage);
  if (checked.every((c) => 'message' in c)) return { messages: checked.map((c) => (c as { message: JSONRPCMessage }).message) };
  const bad = checked.filter((c): c is Extract<Checked, { error: unknown }> => 'error' in c);
  const answered = bad.filter((c) => c.reply).map((c) => c.error);
  return { answer: answered.length ? answered : undefined, error: answered[0] ?? { ...bad[0]!.error, id: null as unknown as string } };
}

/** A line or body as text: -32700 when it is not JSON. */
export function checkText(text: string): CheckedBody {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { answer: parseError(), error: parseError() };
  }
  return checkBody(value);
}
