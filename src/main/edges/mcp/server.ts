/**
 * The MCP server over a hub (official SDK, low-level `Server` so the hub controls validation and
 * error text). One server per MCP session; every call's agent is the credential the session
 * authenticated with, the client's name/version from `initialize` beside it. Long calls send `notifications/progress` when the request carried a
 * progressToken.
 */
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, JSONRPCMessage, JSONRPCRequest, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { driverOfChannel, HubError, toHubError } from '../../hub';
import type { AgentCredential, AgentIdentity, CallerEnvironment, CallOptions, Hub, HubProgress } from '../../hub';
import { clipName } from '../../../shared/escape';
import { checkToolArgs, TOOLS } from './tools';
import { describeAnswer, doctorAnswer, errorAnswer, invokeAnswer, listAnswer, recvAnswer, sendAnswer, toolResult } from './results';
import type { ToolAnswer } from './results';
import { decodeCursor, recvMerged } from './recv';
import type { ToolInput, ToolName } from './tools';

/** The server's name and version in `initialize`. */
export const SERVER_INFO = { name: 'uplink', version: '0.1.0' };

const INSTRUCTIONS =
  'Uplink reaches tmux panes, desktop windows and other targets as channels (<driver>:<addr>). ' +
  'channel_list, then channel_describe a channel to see its ops. Read-only ops go through channel_observe, ' +
  'mutating ones through channel_act or channel_send; mutating calls wait for the operator to approve them in the Uplink panel.';

/** A tool's success. */
function ok(answer: ToolAnswer): CallToolResult {
  return toolResult(answer, { outcome: 'succeeded' });
}

/**
 * Creates an MCP server bound to the hub for one authenticated agent: `credential` is who the
 * connection authenticated as (the agent of every call; the client's declared name travels beside
 * it, untrusted). `session` scopes "approve for the session" grants; `caller` is what the hub
 * established of where the agent runs (the process holding its connection), passed on to drivers.
 */
export function createMcpServer(hub: Hub, credential: AgentCredential, session: string = randomUUID(), caller?: CallerEnvironment): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  const agent = (): AgentIdentity => {
    const client = server.getClientVersion();
    return {
      kind: 'mcp',
      agent_id: credential.id,
      name: client?.name || 'unknown-mcp-client',
      ...(client?.version ? { version: client.version } : {}),
      session,
      ...(caller ? { caller } : {}),
    };
  };

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const name = request.params.name;
    const rawArgs = request.params.arguments;
    if (!TOOLS.some((t) => t.name === name)) {
      // Not a tool's failure but a request for a tool that does not exist: a protocol error, audited.
      const err = hub.recordRejected(
        { agent: agent() },
        new HubError('core', 'NotFound', `no tool ${clipName(name)}`, { hint: `the tools are ${TOOLS.map((t) => t.name).join(', ')}` }),
      );
      throw new RpcRefusal(ErrorCode.InvalidParams, err.rendered);
    }
    const token = request.params._meta?.progressToken;
    const onProgress =
      token === undefined
        ? undefined
        : (p: HubProgress): void => {
            void extra
              .sendNotification({
                method: 'notifications/progress',
                params: { progressToken: token, progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}), message: p.message },
              })
              .catch(() => undefined);
          };
    let reachedHub = false;
    try {
      const input = checkToolArgs(name, rawArgs);
      const call: CallOptions = { agent: agent(), signal: extra.signal, ...(onProgress ? { onProgress } : {}) };
      const tool = name as ToolName;
      switch (tool) {
        case 'channel_list':
          return ok(listAnswer(await hub.listChannels()));
        case 'channel_describe': {
          const { channel, op } = input as ToolInput<typeof tool>;
          reachedHub = true;
          return ok(describeAnswer(await hub.describe(channel, op, call.agent)));
        }
        case 'channel_send': {
          const { channel, message, reply_hint } = input as ToolInput<typeof tool>;
          reachedHub = true;
          return ok(sendAnswer(channel, await hub.send(channel, { message, reply_hint }, call)));
        }
        case 'channel_observe':
        case 'channel_act': {
          const { channel: chan, op, args = {}, interaction, provider } = input as ToolInput<typeof tool>;
          if (op === 'send' || op === 'recv') {
            throw new HubError(driverOfChannel(chan), 'Invalid', `${op} is not taken by ${tool}`, { hint: `use the channel_${op} tool` });
          }
          reachedHub = true;
          const constraints: CallOptions = { ...call, ...(interaction ? { interaction } : {}), ...(provider !== undefined ? { provider } : {}) };
          return ok(invokeAnswer(await hub.invoke(chan, op, args, { ...constraints, expect: tool === 'channel_act' ? 'mutating' : 'read_only' })));
        }
        case 'channel_recv': {
          const { cursor, driver } = input as ToolInput<typeof tool>;
          // A cursor this hub never gave is refused here, before the hub reads anything (and audited as such).
          if (typeof cursor === 'string') decodeCursor(cursor, undefined);
          reachedHub = true;
          if (driver === undefined) return ok(recvAnswer(await recvMerged(hub, cursor, call)));
          // One driver: its own integer cursor, or its position in a merged one.
          const own = typeof cursor === 'string' ? decodeCursor(cursor, undefined)[driver] : cursor;
          return ok(recvAnswer(await hub.recv(own, { ...call, driver })));
        }
        case 'channel_doctor':
          return ok(doctorAnswer(await hub.doctor()));
        default: {
          const never: never = tool;
          throw new Error(`unhandled tool ${String(never)}`);
        }
      }
    } catch (e) {
      const chan = rawArgs && typeof rawArgs.channel === 'string' ? rawArgs.channel : undefined;
      let err = toHubError(chan, e);
      // The hub audits what reaches it; refusals made here are recorded explicitly.
      if (!reachedHub && !['channel_list', 'channel_doctor'].includes(name)) {
        const op = rawArgs && typeof rawArgs.op === 'string' ? rawArgs.op : name === 'channel_send' ? 'send' : undefined;
        err = hub.recordRejected({ ...(chan ? { channel: chan } : {}), ...(op ? { op } : {}), agent: agent() }, err);
      }
      return toolResult(errorAnswer(err), { isError: true, ...(err.outcome ? { outcome: err.outcome } : {}) });
    }
  });
  collapseProtocolErrors(server, (rejected) => hub.recordRejected({ agent: agent() }, rejected));
  return server;
}

/**
 * Connects a server to one of the two transports the hub serves MCP on, with requests dispatched
 * at once. The SDK's dispatcher tries every incoming message against the result-response and
 * error-response schemas before the request schema, and each failing schema parse builds an issue
 * list: about 60 µs of a call's round trip, more than the hub's own work on a read. Both transports
 * have already parsed each message against the JSON-RPC message schema, whose four shapes are
 * strict objects, so a message there with both `method` and `id` is a request and nothing else;
 * it goes straight to the SDK's request handling. Every other message (notifications, answers to
 * the server's own requests) takes the SDK's path. If a later SDK no longer has that entry point,
 * everything takes the SDK's path: slower, never different.
 */
export async function connectMcp(server: Server, transport: Transport): Promise<void> {
  await server.connect(transport);
  const sdkPath = transport.onmessage;
  const onrequest = (server as unknown as { _onrequest?: (request: JSONRPCRequest, extra?: MessageExtraInfo) => void })._onrequest;
  if (!sdkPath || typeof onrequest !== 'function') return;
  transport.onmessage = (message: JSONRPCMessage, extra?: MessageExtraInfo) => {
    if ('method' in message && 'id' in message) onrequest.call(server, message, extra);
    else sdkPath(message, extra);
  };
}

/**
 * The SDK validates requests itself (zod) before our handlers run, and answers with the issue list
 * as multi-line JSON. Every handler is wrapped so such errors reach the agent as one rendered line
 * with the same JSON-RPC code, and a malformed tools/call is audited like any other refusal.
 */
function collapseProtocolErrors(server: Server, audit: (error: HubError) => HubError): void {
  type Handler = (request: unknown, extra: unknown) => Promise<unknown>;
  const handlers = (server as unknown as { _requestHandlers: Map<string, Handler> })._requestHandlers;
  for (const [method, handler] of handlers) {
    handlers.set(method, async (request, extra) => {
      try {
        return await handler(request, extra);
      } catch (e) {
        if (e instanceof RpcRefusal) throw e;
        // A bare ZodError (the SDK's parse of the request) is bad params, not a server failure.
        const zod = Array.isArray((e as { issues?: unknown })?.issues);
        const code = Number.isSafeInteger((e as { code?: unknown })?.code)
          ? (e as { code: number }).code
          : zod
            ? ErrorCode.InvalidParams
            : ErrorCode.InternalError;
        const refused = protocolError(method, code, e instanceof Error ? e.message : String(e));
        const err = method === 'tools/call' ? audit(refused) : refused;
        throw Object.assign(new Error(err.rendered), { code: err === refused ? code : ErrorCode.InternalError });
      }
    });
  }
}

/** A JSON-RPC error whose one-line message is final (already rendered and audited). */
class RpcRefusal extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** The first issue of an SDK validation error (`…: [ {path, message}, … ]`), else the text itself, in one line. */
function protocolError(method: string, code: number, raw: string): HubError {
  const text = raw.replace(/^MCP error -?\d+: /, '');
  let detail = text;
  const list = /^([^[]*?):?\s*(\[[\s\S]*\])\s*$/.exec(text);
  if (list) {
    try {
      const [first] = JSON.parse(list[2]!) as Array<{ path?: unknown[]; message?: string }>;
      if (first) detail = `${list[1] || `invalid ${method} request`}: ${(first.path ?? []).map(String).join('/') || '/'} ${first.message ?? 'is invalid'}`;
    } catch {
      // Not JSON after all: the text, on one line.
    }
  }
  detail = detail.replace(/\s+/g, ' ').trim().slice(0, 500);
  if (code === ErrorCode.InvalidParams || code === ErrorCode.InvalidRequest) {
    return new HubError('core', 'Invalid', detail, { hint: 'call a tool as {name: string, arguments: object}; see tools/list for each input schema' });
  }
  if (code === ErrorCode.MethodNotFound) return new HubError('core', 'NotFound', detail, { hint: 'this server offers tools only: tools/list, tools/call' });
  return new HubError('core', 'Upstream', detail, { hint: 'retry; if it persists run `uplink doctor`' });
}
