/**
 * Calls from other hubs: each runs through this hub's own `invoke`/`send`/`describe`/`decide`
 * exactly as a local call (kernel, policy, guards, approvals, audit), under the caller's identity
 * as declared data: an agent of the calling hub, never a person at this hub's controls.
 */
import type { Msg } from 'nats';
import type { JsonValue } from '../../kernel';
import { toHubError } from '../errors';
import type { HubError } from '../errors';
import type { Hub } from '../hub';
import type { CallOptions } from '../types';
import { decode, encode, MAX_REPLY_BYTES, PROTOCOL_VERSION } from './messages';
import type { FleetErrorBody, FleetReply, FleetRequest } from './messages';
import type { FleetLink } from './link';
import { remoteAgent } from './names';
import { toFleetPrompt } from './prompts';

export class FleetServer {
  readonly #link: FleetLink;
  readonly #core: Hub;
  /** The calls running here for other hubs, by `<from>:<id>`, so that the caller can cancel one. */
  #serving = new Map<string, AbortController>();

  constructor(link: FleetLink, core: Hub) {
    this.#link = link;
    this.#core = core;
  }

  async serve(msg: Msg): Promise<void> {
    // Nothing a hub cannot answer, parse or validate gets an answer: the sender is not speaking the protocol.
    if (!msg.reply) return;
    const req = decode('request', msg.data);
    // The asking hub is the one whose key signed the request (with a roster), never merely the one it names.
    if (!req || !this.#link.believe(msg, req.from)) return;
    const key = `${req.from}:${req.id}`;
    const controller = new AbortController();
    this.#serving.set(key, controller);
    let reply: FleetReply;
    const inbox = msg.reply;
    const link = this.#link;
    // Progress of a long call (waiting for an operator, long work) goes to the caller's inbox as it comes.
    const onProgress =
      'progress' in req && req.progress
        ? (p: { progress: number; total?: number; message: string }): void => {
            try {
              link.send(
                inbox,
                encode({
                  v: PROTOCOL_VERSION,
                  id: req.id,
                  progress: { progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}), message: p.message.slice(0, 1024) },
                }),
              );
            } catch {
              // NATS went away: the caller has been told it is unavailable.
            }
          }
        : undefined;
    try {
      reply = { v: PROTOCOL_VERSION, id: req.id, ok: true, result: await this.#run(req, controller.signal, onProgress) };
    } catch (e) {
      reply = { v: PROTOCOL_VERSION, id: req.id, ok: false, error: errorBody(toHubError('channel' in req ? req.channel : undefined, e)) };
    } finally {
      this.#serving.delete(key);
    }
    let data = encode(reply);
    if (data.byteLength > MAX_REPLY_BYTES) {
      data = encode({
        v: PROTOCOL_VERSION,
        id: req.id,
        ok: false,
        error: {
          driver: 'fleet',
          kind: 'Invalid',
          message: `the result is ${data.byteLength} bytes; a fleet reply is at most ${MAX_REPLY_BYTES}`,
          hint: 'ask for less (fewer lines, a smaller region)',
        },
      });
    }
    try {
      link.send(inbox, data);
    } catch {
      // NATS went away: the caller has been told it is unavailable.
    }
  }

  async #run(req: FleetRequest, signal: AbortSignal, onProgress?: CallOptions['onProgress']): Promise<JsonValue> {
    const core = this.#core;
    switch (req.method) {
      case 'channels':
        return (await core.listChannels()) as unknown as JsonValue;
      case 'describe':
        return (await core.describe(req.channel, req.op, req.agent ? remoteAgent(req.from, req.agent) : undefined)) as unknown as JsonValue;
      case 'invoke': {
        const options: CallOptions = {
          agent: remoteAgent(req.from, req.agent),
          signal,
          ...(onProgress ? { onProgress } : {}),
          ...(req.expect ? { expect: req.expect } : {}),
          ...(req.interaction ? { interaction: req.interaction as CallOptions['interaction'] } : {}),
        };
        return core.invoke(req.channel, req.op, req.args, options);
      }
      case 'send':
        return (await core.send(
          req.channel,
          { message: req.message, ...(req.reply_hint ? { reply_hint: req.reply_hint } : {}) },
          { agent: remoteAgent(req.from, req.agent), signal, ...(onProgress ? { onProgress } : {}) },
        )) as unknown as JsonValue;
      case 'prompts': {
        // Screenshots stay home when the whole list would not fit one reply.
        const list = core
          .pendingApprovals()
          .filter((a) => !a.hub)
          .map(toFleetPrompt);
        const fits = encode({ v: PROTOCOL_VERSION, id: req.id, ok: true, result: list as unknown as JsonValue }).byteLength <= MAX_REPLY_BYTES;
        return (fits ? list : list.map((p) => (p.preview?.image_png ? { ...p, preview: { ...p.preview, image_png: undefined } } : p))) as unknown as JsonValue;
      }
      case 'decide': {
        // A panel of another hub passes on its operator's answer; this hub records and enforces it.
        const decided = await core.decide(req.approval_id, {
          kind: req.decision,
          by: `${req.by} on hub ${req.from}`,
          ...(req.reason ? { reason: req.reason } : {}),
        });
        return { approval_id: decided.approval_id, granted: decided.granted };
      }
    }
  }

  /** The caller gave up on a call (its agent cancelled): the call here is cancelled too. */
  cancelled(msg: Msg): void {
    const c = decode('cancel', msg.data);
    if (c && this.#link.believe(msg, c.from)) this.#serving.get(`${c.from}:${c.id}`)?.abort();
  }

  /** Cancels every call running here for another hub (this hub is leaving). */
  abortAll(): void {
    for (const c of this.#serving.values()) c.abort();
  }
}

function errorBody(err: HubError): FleetErrorBody {
  return {
    driver: err.driver.slice(0, 128),
    kind: err.kind,
    message: err.message.slice(0, 8192),
    ...(err.hint ? { hint: err.hint.slice(0, 8192) } : {}),
    ...(err.outcome ? { outcome: err.outcome } : {}),
  };
}
