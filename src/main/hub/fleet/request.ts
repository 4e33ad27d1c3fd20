/**
 * Calls to other hubs: one request, one reply on a private inbox (with the owning hub's progress
 * meanwhile). A call fails at once, rather than waiting out a timeout, when its hub is not
 * connected, goes silent or leaves, or this hub loses the NATS server.
 */
import { randomBytes } from 'node:crypto';
import { createInbox } from 'nats';
import type { JsonValue } from '../../kernel';
import { DRIVER_ERROR_KINDS } from '../../drivers';
import type { DriverErrorKind } from '../../drivers';
import { ending, HubError } from '../errors';
import type { CallOptions } from '../types';
import { decode, encode, MAX_REQUEST_BYTES, PROTOCOL_VERSION, subjects } from './messages';
import type { FleetReply, FleetRequest } from './messages';
import type { FleetLink } from './link';

/** A request as the caller writes it; the fleet adds the version, id and sender. */
export type FleetBody = FleetRequest extends infer R ? (R extends FleetRequest ? Omit<R, 'v' | 'id' | 'from'> : never) : never;

export const unavailable = (message: string, hint: string): HubError => new HubError('fleet', 'Unavailable', message, { hint });

interface Pending {
  hub: string;
  fail: (err: HubError) => void;
}

export class FleetRequests {
  readonly #link: FleetLink;
  readonly #peers: { has(hub: string): boolean; hubs(): string[] };
  #pending = new Map<string, Pending>();

  /** `peers`: the hubs connected now (presence). */
  constructor(link: FleetLink, peers: { has(hub: string): boolean; hubs(): string[] }) {
    this.#link = link;
    this.#peers = peers;
  }

  /** Sends one request to `hub` and waits for its reply; fails at once when the hub or NATS is gone. */
  request(hub: string, body: FleetBody, signal?: AbortSignal, timeoutMs?: number, onProgress?: CallOptions['onProgress']): Promise<JsonValue> {
    const link = this.#link;
    const nc = link.nc;
    if (!nc || !link.connected) {
      return Promise.reject(
        unavailable(
          `hub ${hub} cannot be reached: ${link.problem ?? 'this hub is not in the fleet'}`,
          "local channels still work; check the NATS server and this hub's fleet settings, then retry",
        ),
      );
    }
    if (!this.#peers.has(hub)) {
      const known = this.#peers.hubs();
      return Promise.reject(
        unavailable(
          `hub ${hub} is not connected to the fleet (connected: ${known.join(', ') || 'none'})`,
          `start hub ${hub} or check its fleet settings; list channels with channel_list`,
        ),
      );
    }
    const id = randomBytes(12).toString('hex');
    const data = encode({ v: PROTOCOL_VERSION, id, from: link.name, ...body } as FleetRequest);
    if (data.byteLength > MAX_REQUEST_BYTES)
      return Promise.reject(
        new HubError('fleet', 'Invalid', `the request is ${data.byteLength} bytes; a fleet request is at most ${MAX_REQUEST_BYTES}`, {
          hint: 'send less text per call',
        }),
      );
    return new Promise<JsonValue>((resolve, reject) => {
      const inbox = createInbox(link.inboxPrefix);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const settle = (): void => {
        this.#pending.delete(id);
        sub.unsubscribe();
        if (timer) clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const sub = nc.subscribe(inbox, {
        callback: (_e, msg) => {
          // Only the hub the call went to may answer it (with a roster): anything else on the inbox is dropped.
          if (!link.believe(msg, hub)) return;
          const reply = decode('reply', msg.data);
          if (!reply) {
            const p = onProgress && decode('progress', msg.data);
            if (p && p.id === id) {
              try {
                onProgress({ ...p.progress, message: `hub ${hub}: ${p.progress.message}` });
              } catch {
                // A broken progress sink must not fail the call.
              }
            }
            return;
          }
          if (reply.id !== id) return;
          settle();
          if (reply.ok) resolve(reply.result);
          else reject(fromReply(hub, reply));
        },
      });
      const onAbort = (): void => {
        settle();
        try {
          link.send(subjects.cancel(hub), encode({ v: PROTOCOL_VERSION, id, from: link.name }));
        } catch {
          // NATS is gone: the owning hub sees the caller vanish only through its own timeouts.
        }
        reject(new HubError('fleet', 'Rejected', `the call to hub ${hub} was cancelled`));
      };
      this.#pending.set(id, { hub, fail: (err) => (settle(), reject(err)) });
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      if (timeoutMs)
        timer = setTimeout(() => (settle(), reject(unavailable(`hub ${hub} did not answer within ${timeoutMs} ms`, 'it may be busy; retry'))), timeoutMs);
      try {
        link.send(subjects.call(hub), data, inbox);
      } catch (e) {
        settle();
        reject(unavailable(`hub ${hub} cannot be reached: ${(e as Error).message}`, 'retry once the fleet is back'));
      }
    });
  }

  /** Fails the calls waiting on `hub` (every hub when absent): whether they ran there is unknown. */
  fail(error: (hub: string) => HubError, hub?: string): void {
    for (const [id, p] of this.#pending) {
      if (hub !== undefined && p.hub !== hub) continue;
      this.#pending.delete(id);
      p.fail(error(p.hub));
    }
  }
}

/**
 * Another hub's error as this hub's agent hears it: its channels named as this hub names them
 * (`<hub>/tmux:%0`, so a hint is acted on where it points) and how the call ended there, which an
 * older hub that does not say is read from the error as a failed call's record would be.
 */
function fromReply(hub: string, reply: FleetReply & { ok: false }): HubError {
  const { driver, kind, message, hint, outcome } = reply.error;
  const known = (DRIVER_ERROR_KINDS as readonly string[]).includes(kind) ? (kind as DriverErrorKind) : 'Upstream';
  // Named as this hub names that hub's drivers (`b/tmux`), as a local call on `b/tmux:%0` would be.
  const err = new HubError(driver.includes('/') ? driver : `${hub}/${driver}`, known, remoteChannels(hub, message), {
    ...(hint ? { hint: remoteChannels(hub, hint) } : {}),
    ...(outcome ? { outcome } : {}),
  });
  return ending(err, { state: 'failed' });
}

/**
 * `text` with every channel it names (`<driver>:<address>`, at the start of a word) prefixed with
 * `hub/`, the name this hub gives that hub's channel. A name already prefixed, a URL (`http://…`),
 * a time (`12:30`) or a label followed by a space (`hint: …`) is left alone.
 */
export function remoteChannels(hub: string, text: string): string {
  return text.replace(/(^|[\s(`'"“])([a-z][a-z0-9-]*:[%@A-Za-z0-9_.][^\s,;)`'"”]*)/g, (_m, before: string, channel: string) => `${before}${hub}/${channel}`);
}
