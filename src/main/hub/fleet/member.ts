/**
 * A hub's membership in a fleet of hubs on NATS (docs/fleet.md). Loaded only when config.json has
 * a `fleet` section, so a hub without one never loads the NATS client.
 *
 * A call to `<hub>/<channel>` travels as request/reply to the owning hub, which runs it through its
 * own `invoke`/`send`/`describe` exactly as a local call (kernel, policy, guards, approvals,
 * audit). The owning hub alone decides: the caller's identity arrives as declared data and is
 * recorded as an agent of the calling hub, never with the authority of a person at its controls.
 */
import { randomBytes } from 'node:crypto';
import { connect, createInbox } from 'nats';
import type { Msg, NatsConnection, Subscription } from 'nats';
import type { InteractionKind, JsonValue } from '../../kernel';
import { DRIVER_ERROR_KINDS, driverOfChannel } from '../../drivers';
import type { ChannelEntry, DriverErrorKind, SendReceipt } from '../../drivers';
import { checkBounds } from '../bounds';
import type { FleetSettings } from '../config';
import { fleetAuth } from './auth';
import { HubError, toHubError } from '../errors';
import type { Hub } from '../hub';
import type { AgentIdentity, ApprovalEvent, AuditEntry, FleetHistoryEntry, CallOptions, Disposer, FleetChange, FleetMemberStatus, FleetStatus, HubDoctor, HubSendRequest, PendingApproval, RecordedAuthorization } from '../types';
import { decode, encode, MAX_PROMPT_BYTES, MAX_REPLY_BYTES, MAX_REQUEST_BYTES, PROTOCOL_VERSION, promptList, subjects } from './messages';
import { startHistoryPublisher, startHistoryReader } from './history';
import { Emitter } from '../../../shared/emitter';
import type { FleetAgent, FleetErrorBody, FleetPrompt, FleetPromptEvent, FleetReply, FleetRequest } from './messages';

export { readFleetToken } from './auth';

export interface FleetOptions {
  /** How often this hub says it is present; a hub unheard for three beats is gone (default 2000 ms). */
  heartbeatMs?: number;
  /** How long `channel_list` waits for each other hub (default 3000 ms). */
  listTimeoutMs?: number;
  /** One line per fleet event (connected, lost, a name taken twice); never the token. */
  log?: (line: string) => void;
}

/** A hub that is a fleet member: the Hub interface, with the fleet's views present. */
export type FleetHub = Hub & Required<Pick<Hub, 'fleetStatus' | 'subscribeFleet'>>;

/** A request as the caller writes it; the fleet adds the version, id and sender. */
type FleetBody = FleetRequest extends infer R ? (R extends FleetRequest ? Omit<R, 'v' | 'id' | 'from'> : never) : never;

const HUB_NAME = /^([a-z][a-z0-9-]*)\/(.+)$/;

/** The hub a channel belongs to, when it is `<hub>/<channel>` (a local channel has no `/` before its `:`). */
export function splitFleetChannel(channel: string): { hub: string; channel: string } | undefined {
  const m = HUB_NAME.exec(channel);
  return m ? { hub: m[1]!, channel: m[2]! } : undefined;
}

/** The identity a call from another hub runs under here: an agent of that hub, never a person. */
export function remoteAgent(from: string, a: FleetAgent): AgentIdentity {
  return {
    kind: 'mcp',
    name: `${from}/${a.name}`,
    agent_id: `${from}/${a.agent_id ?? `${a.kind}:${a.name}`}`,
    ...(a.version ? { version: a.version } : {}),
    ...(a.user ? { user: `${from}/${a.user}` } : {}),
    ...(a.session ? { session: `${from}/${a.session}` } : {}),
  };
}

function declared(agent: AgentIdentity): FleetAgent {
  const cut = (s: string): string => s.slice(0, 256);
  return {
    kind: agent.kind,
    name: cut(agent.name),
    ...(agent.agent_id ? { agent_id: cut(agent.agent_id) } : {}),
    ...(agent.version ? { version: cut(agent.version) } : {}),
    ...(agent.user ? { user: cut(agent.user) } : {}),
    ...(agent.session ? { session: cut(agent.session) } : {}),
  };
}

const unavailable = (message: string, hint: string): HubError => new HubError('fleet', 'Unavailable', message, { hint });

/** A prompt as it travels: this hub's own ids and channel, the agent as declared, a screenshot only if it fits. */
export function toFleetPrompt(a: PendingApproval): FleetPrompt {
  const { hub: _hub, redacted_args: _redacted, agent, preview, ...rest } = a; // only the owner's panel may scope it
  const out: FleetPrompt = { ...rest, agent: declared(agent) };
  if (preview) out.preview = { ...preview, ...(preview.warnings ? { warnings: preview.warnings.slice(0, 256) } : {}), ...(preview.lines ? { lines: preview.lines.slice(-256) } : {}) };
  if (out.preview?.image_png && encode({ v: PROTOCOL_VERSION, hub: 'x', type: 'added', approval: out }).byteLength > MAX_PROMPT_BYTES) {
    const { image_png: _image, ...small } = out.preview;
    out.preview = { ...small, warnings: [...(small.warnings ?? []).slice(0, 255), "the screenshot is too large to travel in the fleet: see it on the owning hub's panel"] };
  }
  return out;
}

/** Another hub's prompt as this hub lists it: ids and channel prefixed with that hub's name. */
function fromFleetPrompt(hub: string, p: FleetPrompt): PendingApproval {
  const { rule_channel: _stable, agent, ...rest } = p;
  return {
    ...rest,
    approval_id: `${hub}/${p.approval_id}`,
    channel: `${hub}/${p.channel}`,
    agent: { ...agent },
    interaction: p.interaction as InteractionKind,
    hub,
  };
}

interface Pending {
  hub: string;
  fail: (err: HubError) => void;
}

class Fleet {
  readonly settings: FleetSettings;
  #core: Hub;
  #options: Required<Omit<FleetOptions, 'log'>> & Pick<FleetOptions, 'log'>;
  #instance = randomBytes(8).toString('hex');
  #since = Date.now();
  #nc: NatsConnection | undefined;
  #connected = false;
  #problem: string | undefined = 'not connected yet';
  #peers = new Map<string, { instance: string; since: number; seen: number; panels: number }>();
  /** Hubs heard from before that are out of reach now: since when, and why. */
  #lost = new Map<string, { since: number; problem: string }>();
  /** Other hubs' pending prompts, by hub, by their own approval id. */
  #prompts = new Map<string, Map<string, PendingApproval>>();
  #approvalListeners = new Emitter<ApprovalEvent>();
  #fleetListeners = new Emitter<FleetChange>();
  /** Held while another hub has a panel attached, so this hub asks its prompts instead of denying them. */
  #panelHold: Disposer | undefined;
  #publisher: ReturnType<typeof startHistoryPublisher> | undefined;
  #reader: ReturnType<typeof startHistoryReader> | undefined;
  #ownApprovals: Disposer | undefined;
  #pending = new Map<string, Pending>();
  #serving = new Map<string, AbortController>();
  #subs: Subscription[] = [];
  #timer: ReturnType<typeof setInterval> | undefined;
  #attempts = 0;
  #closed = false;
  #warnedTwin = false;

  constructor(core: Hub, settings: FleetSettings, options: FleetOptions) {
    this.#core = core;
    this.settings = settings;
    this.#options = { heartbeatMs: options.heartbeatMs ?? 2000, listTimeoutMs: options.listTimeoutMs ?? 3000, log: options.log };
  }

  start(): void {
    let auth: ReturnType<typeof fleetAuth>;
    try {
      auth = fleetAuth(this.settings, this.#core.dataDir);
    } catch (e) {
      this.#problem = `the fleet's credentials cannot be used: ${(e as Error).message}`;
      this.#log(this.#problem);
      return;
    }
    const url = this.settings.url;
    // Backoff from a quarter second to five: a restarted server is found at once, a long outage costs little.
    const backoff = (): number => Math.min(5000, 250 * 2 ** Math.min(this.#attempts++, 5));
    // The first connection is retried here, not by the client (waitOnFirstConnect), which would
    // retry a refused login forever without saying why: doctor must name the server's reason.
    const attempt = (): void => {
      if (this.#closed) return;
      connect({
        servers: url,
        ...auth,
        name: `uplink-${this.settings.name}`,
        reconnect: true,
        maxReconnectAttempts: -1,
        reconnectDelayHandler: backoff,
        pingInterval: 10_000,
      }).then(
        (nc) => this.#joined(nc),
        (e: unknown) => {
          const problem = `cannot join the fleet at ${url}: ${(e as Error).message}`;
          if (problem !== this.#problem) this.#log(problem);
          this.#problem = problem;
          setTimeout(attempt, backoff()).unref?.();
        },
      );
    };
    attempt();
  }

  #joined(nc: NatsConnection): void {
    if (this.#closed) {
      void nc.close();
      return;
    }
    this.#nc = nc;
    this.#up();
    const name = this.settings.name;
    // One queue group per name: were two hubs ever given one name, a call still runs once.
    this.#subs.push(nc.subscribe(subjects.call(name), { queue: 'owner', callback: (_e, msg) => void this.#serve(msg) }));
    this.#subs.push(nc.subscribe(subjects.cancel(name), { callback: (_e, msg) => this.#cancelled(msg) }));
    this.#subs.push(nc.subscribe(subjects.allPresence, { callback: (_e, msg) => this.#presence(msg) }));
    this.#subs.push(nc.subscribe(subjects.allPrompts, { callback: (_e, msg) => this.#promptEvent(msg) }));
    // This hub's prompts go to every panel of the fleet as they are raised and decided.
    this.#ownApprovals = this.#core.subscribeApprovals((event) => this.#publishPrompt(event));
    // History: this hub's audit goes to the fleet's stream; every hub's comes back merged.
    const core = this.#core;
    const source = {
      after: (cursor: number, limit: number) => core.queryAudit({ after: cursor, limit }).entries,
      newest: () => core.queryAudit({ limit: 1 }).entries[0]?.id ?? 0,
      subscribe: (listener: (entry: AuditEntry) => void) => core.subscribe(listener),
    };
    const log = (line: string): void => this.#log(line);
    this.#publisher = startHistoryPublisher({ nc, hub: name, source, log });
    this.#reader = startHistoryReader({ nc, log, onEntry: (entry) => this.#fleetListeners.emit({ type: 'entry', entry }) });
    this.#timer = setInterval(() => this.#beat(), this.#options.heartbeatMs);
    this.#timer.unref?.();
    this.announce();
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'disconnect') this.#down(`the fleet's NATS server ${this.settings.url} is unreachable since ${new Date().toISOString()}`);
        else if (s.type === 'reconnect') {
          this.#up();
          this.#publisher?.resume();
        }
      }
    })().catch(() => undefined);
  }

  #up(): void {
    this.#connected = true;
    this.#attempts = 0;
    this.#problem = undefined;
    this.#log(`joined the fleet at ${this.settings.url} as ${this.settings.name}`);
    this.announce();
    this.#changed();
  }

  #down(problem: string): void {
    if (!this.#connected) return;
    this.#connected = false;
    this.#problem = problem;
    this.#log(problem);
    const now = Date.now();
    for (const hub of this.#peers.keys()) {
      this.#lost.set(hub, { since: now, problem: "this hub lost the fleet's NATS server" });
      this.#withdrawAll(hub, `hub ${hub} is out of reach (this hub lost the fleet's NATS server); it still decides its own prompt`);
    }
    this.#peers.clear();
    this.#holdPanels();
    this.#changed();
    for (const [id, p] of this.#pending) {
      this.#pending.delete(id);
      p.fail(unavailable(`the fleet's NATS server was lost during a call to hub ${p.hub}; whether it ran there is unknown`, `look at hub ${p.hub}'s audit log, and retry once the fleet is back`));
    }
  }

  /** Operator panels attached here, not counting the hold that stands for other hubs' panels. */
  #ownPanels(): number {
    return Math.max(0, this.#core.panelsAttached() - (this.#panelHold ? 1 : 0));
  }

  /** Says this hub is present (or leaving), with how many of its own operator panels are attached. */
  announce(leaving = false): void {
    if (!this.#nc || !this.#connected) return;
    const panels = this.#ownPanels();
    try {
      this.#nc.publish(subjects.presence(this.settings.name), encode({ v: PROTOCOL_VERSION, hub: this.settings.name, instance: this.#instance, since: this.#since, panels, ...(leaving ? { leaving } : {}) }));
    } catch {
      // Closed meanwhile: the next beat (or nobody) says it.
    }
  }

  #beat(): void {
    this.announce();
    const stale = Date.now() - 3 * this.#options.heartbeatMs;
    for (const [hub, p] of this.#peers) if (p.seen < stale) this.#gone(hub, `hub ${hub} has not been heard from for ${Math.round((Date.now() - p.seen) / 1000)} s`);
  }

  #gone(hub: string, why: string): void {
    if (!this.#peers.delete(hub)) return;
    this.#lost.set(hub, { since: Date.now(), problem: why });
    this.#withdrawAll(hub, `${why}; it still decides its own prompt`);
    this.#holdPanels();
    this.#changed();
    for (const [id, p] of this.#pending) {
      if (p.hub !== hub) continue;
      this.#pending.delete(id);
      p.fail(unavailable(`${why}, during a call to it; whether the call ran there is unknown`, `look at hub ${hub}'s audit log before retrying`));
    }
  }

  #presence(msg: Msg): void {
    const p = decode('presence', msg.data);
    if (!p || msg.subject !== subjects.presence(p.hub)) return;
    if (p.hub === this.settings.name) {
      if (p.instance !== this.#instance && !this.#warnedTwin) {
        this.#warnedTwin = true;
        this.#log(`another hub also calls itself ${p.hub} — hint: give each hub its own fleet.name in config.json`);
      }
      return;
    }
    if (p.leaving) return this.#gone(p.hub, `hub ${p.hub} left the fleet`);
    const known = this.#peers.get(p.hub);
    const panels = p.panels ?? 0;
    this.#peers.set(p.hub, { instance: p.instance, since: p.since, seen: Date.now(), panels });
    if (!known || known.panels !== panels) this.#holdPanels();
    if (known) return;
    // A newcomer learns of this hub at once rather than at the next beat, and shows its prompts here.
    this.#lost.delete(p.hub);
    this.announce();
    void this.#syncPrompts(p.hub);
    this.#changed();
  }

  /**
   * While some other hub has an operator panel attached, this hub counts as watched: its mutating
   * calls ask (the prompt shows on that panel too) instead of being denied for want of an operator.
   */
  #holdPanels(): void {
    const watched = [...this.#peers.values()].some((p) => p.panels > 0);
    if (watched && !this.#panelHold) this.#panelHold = this.#core.attachPanel();
    else if (!watched && this.#panelHold) {
      this.#panelHold();
      this.#panelHold = undefined;
    }
  }

  // ── prompts of the fleet ────────────────────────────────────────────────────────────────
  #publishPrompt(event: ApprovalEvent): void {
    if (!this.#nc || !this.#connected) return;
    const hub = this.settings.name;
    let message: FleetPromptEvent;
    if (event.type === 'added') {
      // Only this hub's own prompts: another hub's are that hub's to publish.
      if (event.approval.hub) return;
      message = { v: PROTOCOL_VERSION, hub, type: 'added', approval: toFleetPrompt(event.approval) };
    } else if (event.type === 'resolved') {
      message = {
        v: PROTOCOL_VERSION,
        hub,
        type: 'resolved',
        approval_id: event.approval_id,
        granted: event.granted,
        authorized: event.authorized,
        ...(event.by ? { by: event.by.slice(0, 512) } : {}),
        ...(event.reason ? { reason: event.reason.slice(0, 2000) } : {}),
        ...(event.decision ? { decision: event.decision } : {}),
      };
    } else return;
    try {
      this.#nc.publish(subjects.prompts(hub), encode(message));
    } catch {
      // NATS went away: the others withdraw this hub's prompts and fetch them again on reconnect.
    }
  }

  #promptEvent(msg: Msg): void {
    const e = decode('prompt', msg.data);
    if (!e || msg.subject !== subjects.prompts(e.hub) || e.hub === this.settings.name || !this.#peers.has(e.hub)) return;
    const mine = this.#promptsOf(e.hub);
    if (e.type === 'added') {
      const approval = fromFleetPrompt(e.hub, e.approval);
      mine.set(e.approval.approval_id, approval);
      this.#emitApproval({ type: 'added', approval });
    } else if (mine.delete(e.approval_id)) {
      const { v: _v, hub: _hub, type: _type, approval_id, authorized, ...rest } = e;
      this.#emitApproval({ type: 'resolved', approval_id: `${e.hub}/${approval_id}`, authorized: authorized as RecordedAuthorization, ...rest });
    }
  }

  /** Fetches a hub's pending prompts (it just appeared): they show here until it decides them. */
  async #syncPrompts(hub: string): Promise<void> {
    const before = new Set(this.#prompts.get(hub)?.keys() ?? []);
    let list: FleetPrompt[] | undefined;
    try {
      list = promptList(await this.request(hub, { method: 'prompts' }, undefined, this.#options.listTimeoutMs));
    } catch {
      return; // Out of reach again: its presence will bring it back.
    }
    if (!list || !this.#peers.has(hub)) return;
    const mine = this.#promptsOf(hub);
    const now = new Set(list.map((p) => p.approval_id));
    for (const p of list) {
      if (mine.has(p.approval_id)) continue;
      const approval = fromFleetPrompt(hub, p);
      mine.set(p.approval_id, approval);
      this.#emitApproval({ type: 'added', approval });
    }
    // Gone there while this hub was not listening (one that arrived meanwhile is kept).
    for (const id of before) if (!now.has(id) && mine.delete(id)) this.#emitApproval({ type: 'withdrawn', approval_id: `${hub}/${id}`, reason: `hub ${hub} no longer has this prompt` });
  }

  #promptsOf(hub: string): Map<string, PendingApproval> {
    let mine = this.#prompts.get(hub);
    if (!mine) this.#prompts.set(hub, (mine = new Map()));
    return mine;
  }

  #withdrawAll(hub: string, reason: string): void {
    const mine = this.#prompts.get(hub);
    if (!mine) return;
    this.#prompts.delete(hub);
    for (const id of mine.keys()) this.#emitApproval({ type: 'withdrawn', approval_id: `${hub}/${id}`, reason });
  }

  #emitApproval(event: ApprovalEvent): void {
    this.#approvalListeners.emit(event);
  }

  /** Other hubs' pending prompts, in no particular order. */
  remotePrompts(): PendingApproval[] {
    return [...this.#prompts.values()].flatMap((m) => [...m.values()]);
  }

  onApprovals(listener: (event: ApprovalEvent) => void): Disposer {
    return this.#approvalListeners.on(listener);
  }

  onFleet(listener: (change: FleetChange) => void): Disposer {
    return this.#fleetListeners.on(listener);
  }

  #changed(): void {
    // The status is built only when a panel listens.
    if (this.#fleetListeners.size) this.#fleetListeners.emit({ type: 'status', status: this.status() });
  }

  status(): FleetStatus {
    const others: FleetMemberStatus[] = [
      ...[...this.#peers].map(([hub, p]): FleetMemberStatus => ({ hub, state: 'connected', since: p.since, panels: p.panels })),
      ...[...this.#lost].map(([hub, l]): FleetMemberStatus => ({ hub, state: 'unreachable', since: l.since, problem: l.problem })),
    ].sort((a, b) => a.hub.localeCompare(b.hub));
    const self: FleetMemberStatus = { hub: this.settings.name, state: this.#connected ? 'self' : 'unreachable', since: this.#since, panels: this.#ownPanels(), ...(this.#problem ? { problem: this.#problem } : {}) };
    return { name: this.settings.name, url: this.settings.url, connected: this.#connected, ...(this.#problem ? { problem: this.#problem } : {}), members: [self, ...others] };
  }

  /** The fleet's merged history, newest first (empty until this hub has joined). */
  history(query: { hub?: string; before?: number; limit?: number }): { entries: FleetHistoryEntry[]; next_before?: number } {
    return this.#reader?.query(query) ?? { entries: [] };
  }

  hubs(): string[] {
    return [...this.#peers.keys()].sort();
  }

  // ── calls to other hubs ─────────────────────────────────────────────────────────────────
  /** Sends one request to `hub` and waits for its reply; fails at once when the hub or NATS is gone. */
  request(hub: string, body: FleetBody, signal?: AbortSignal, timeoutMs?: number, onProgress?: CallOptions['onProgress']): Promise<JsonValue> {
    const nc = this.#nc;
    if (!nc || !this.#connected) {
      return Promise.reject(unavailable(`hub ${hub} cannot be reached: ${this.#problem ?? 'this hub is not in the fleet'}`, "local channels still work; check the NATS server and this hub's fleet settings, then retry"));
    }
    if (!this.#peers.has(hub)) {
      const known = this.hubs();
      return Promise.reject(unavailable(`hub ${hub} is not connected to the fleet (connected: ${known.join(', ') || 'none'})`, `start hub ${hub} or check its fleet settings; list channels with channel_list`));
    }
    const id = randomBytes(12).toString('hex');
    const data = encode({ v: PROTOCOL_VERSION, id, from: this.settings.name, ...body } as FleetRequest);
    if (data.byteLength > MAX_REQUEST_BYTES) return Promise.reject(new HubError('fleet', 'Invalid', `the request is ${data.byteLength} bytes; a fleet request is at most ${MAX_REQUEST_BYTES}`, { hint: 'send less text per call' }));
    return new Promise<JsonValue>((resolve, reject) => {
      const inbox = createInbox();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const settle = (): void => {
        this.#pending.delete(id);
        sub.unsubscribe();
        if (timer) clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const sub = nc.subscribe(inbox, {
        callback: (_e, msg) => {
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
          else reject(fromReply(reply));
        },
      });
      const onAbort = (): void => {
        settle();
        try {
          nc.publish(subjects.cancel(hub), encode({ v: PROTOCOL_VERSION, id, from: this.settings.name }));
        } catch {
          // NATS is gone: the owning hub sees the caller vanish only through its own timeouts.
        }
        reject(new HubError('fleet', 'Rejected', `the call to hub ${hub} was cancelled`));
      };
      this.#pending.set(id, { hub, fail: (err) => (settle(), reject(err)) });
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      if (timeoutMs) timer = setTimeout(() => (settle(), reject(unavailable(`hub ${hub} did not answer within ${timeoutMs} ms`, 'it may be busy; retry'))), timeoutMs);
      nc.publish(subjects.call(hub), data, { reply: inbox });
    });
  }

  listTimeoutMs(): number {
    return this.#options.listTimeoutMs;
  }

  // ── calls from other hubs ───────────────────────────────────────────────────────────────
  async #serve(msg: Msg): Promise<void> {
    // Nothing a hub cannot answer, parse or validate gets an answer: the sender is not speaking the protocol.
    if (!msg.reply) return;
    const req = decode('request', msg.data);
    if (!req) return;
    const key = `${req.from}:${req.id}`;
    const controller = new AbortController();
    this.#serving.set(key, controller);
    let reply: FleetReply;
    const inbox = msg.reply;
    const nc = this.#nc;
    // Progress of a long call (waiting for an operator, long work) goes to the caller's inbox as it comes.
    const onProgress = 'progress' in req && req.progress && nc
      ? (p: { progress: number; total?: number; message: string }): void => {
          try {
            nc.publish(inbox, encode({ v: PROTOCOL_VERSION, id: req.id, progress: { progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}), message: p.message.slice(0, 1024) } }));
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
      data = encode({ v: PROTOCOL_VERSION, id: req.id, ok: false, error: { driver: 'fleet', kind: 'Invalid', message: `the result is ${data.byteLength} bytes; a fleet reply is at most ${MAX_REPLY_BYTES}`, hint: 'ask for less (fewer lines, a smaller region)' } });
    }
    try {
      msg.respond(data);
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
        const options: CallOptions = { agent: remoteAgent(req.from, req.agent), signal, ...(onProgress ? { onProgress } : {}), ...(req.expect ? { expect: req.expect } : {}), ...(req.interaction ? { interaction: req.interaction as CallOptions['interaction'] } : {}) };
        return core.invoke(req.channel, req.op, req.args, options);
      }
      case 'send':
        return (await core.send(req.channel, { message: req.message, ...(req.reply_hint ? { reply_hint: req.reply_hint } : {}) }, { agent: remoteAgent(req.from, req.agent), signal, ...(onProgress ? { onProgress } : {}) })) as unknown as JsonValue;
      case 'prompts': {
        // Screenshots stay home when the whole list would not fit one reply.
        const list = core.pendingApprovals().filter((a) => !a.hub).map(toFleetPrompt);
        const fits = encode({ v: PROTOCOL_VERSION, id: req.id, ok: true, result: list as unknown as JsonValue }).byteLength <= MAX_REPLY_BYTES;
        return (fits ? list : list.map((p) => (p.preview?.image_png ? { ...p, preview: { ...p.preview, image_png: undefined } } : p))) as unknown as JsonValue;
      }
      case 'decide': {
        // A panel of another hub passes on its operator's answer; this hub records and enforces it.
        const decided = await core.decide(req.approval_id, { kind: req.decision, by: `${req.by} on hub ${req.from}`, ...(req.reason ? { reason: req.reason } : {}) });
        return { approval_id: decided.approval_id, granted: decided.granted };
      }
    }
  }

  #cancelled(msg: Msg): void {
    const c = decode('cancel', msg.data);
    if (c) this.#serving.get(`${c.from}:${c.id}`)?.abort();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    for (const c of this.#serving.values()) c.abort();
    this.#ownApprovals?.();
    const nc = this.#nc;
    if (!nc) return;
    this.announce(true);
    this.#down('this hub left the fleet');
    await this.#publisher?.close();
    await this.#reader?.close();
    await nc.flush().catch(() => undefined);
    await nc.close().catch(() => undefined);
  }

  #log(line: string): void {
    this.#options.log?.(`uplink fleet: ${line}`);
  }
}

function errorBody(err: HubError): FleetErrorBody {
  return { driver: err.driver.slice(0, 128), kind: err.kind, message: err.message.slice(0, 8192), ...(err.hint ? { hint: err.hint.slice(0, 8192) } : {}) };
}

function fromReply(reply: FleetReply & { ok: false }): HubError {
  const { driver, kind, message, hint } = reply.error;
  const known = (DRIVER_ERROR_KINDS as readonly string[]).includes(kind) ? (kind as DriverErrorKind) : 'Upstream';
  return new HubError(driver, known, message, hint ? { hint } : {});
}

/**
 * `core` as a fleet member: `<hub>/<channel>` goes to that hub, `channel_list` lists every
 * connected hub's channels, everything else is `core`'s. Connects in the background: until it has,
 * a remote call fails as unavailable and local work goes on.
 */
export function joinFleet(core: Hub, settings: FleetSettings, options: FleetOptions = {}): FleetHub {
  const fleet = new Fleet(core, settings, options);
  fleet.start();
  const own = settings.name;
  const remote = (channel: string): { hub: string; channel: string } | undefined => {
    const at = splitFleetChannel(channel);
    return at && at.hub !== own ? at : undefined;
  };
  const local = (channel: string): string => {
    const at = splitFleetChannel(channel);
    return at && at.hub === own ? at.channel : channel;
  };
  // A refusal before the call left this hub is this hub's to record, like any refused request.
  const refused = (channel: string, op: string, agent: AgentIdentity | undefined, e: unknown): never => {
    const err = toHubError(channel, e);
    throw agent && err.driver === 'fleet' ? core.recordRejected({ channel, op, agent }, err) : err;
  };
  type CallBody = Extract<FleetBody, { method: 'invoke' | 'send' }>;
  const call = async (at: { hub: string; channel: string }, full: string, op: string, body: CallBody, options: CallOptions): Promise<JsonValue> => {
    try {
      checkBounds(full, op, 'args' in body ? body.args : undefined);
      const withProgress: CallBody = options.onProgress ? { ...body, progress: true } : body;
      return await fleet.request(at.hub, withProgress, options.signal, undefined, options.onProgress);
    } catch (e) {
      return refused(full, op, options.agent, e);
    }
  };
  const prefixed = (hub: string, entry: ChannelEntry): ChannelEntry => ({ ...entry, channel: `${hub}/${entry.channel}` });
  const remoteChannels = (): Promise<Array<{ hub: string; channels: ChannelEntry[] }>> =>
    Promise.all(
      fleet.hubs().map(async (hub) => {
        try {
          const list = (await fleet.request(hub, { method: 'channels' }, undefined, fleet.listTimeoutMs())) as unknown as ChannelEntry[];
          return { hub, channels: Array.isArray(list) ? list.map((c) => prefixed(hub, c)) : [] };
        } catch {
          return { hub, channels: [] }; // A hub that does not answer has no channels to offer now.
        }
      }),
    );

  const remotePrompt = (approvalId: string): { hub: string; id: string } | undefined => {
    const at = splitFleetChannel(approvalId);
    return at && at.hub !== own ? { hub: at.hub, id: at.channel } : undefined;
  };
  const overrides: Partial<FleetHub> = {
    fleetStatus: () => fleet.status(),
    subscribeFleet: (listener) => fleet.onFleet(listener),
    fleetHistory: (query) => fleet.history(query),
    attachPanel() {
      // Other hubs learn at once that an operator is watching here (their prompts then ask).
      const detach = core.attachPanel();
      fleet.announce();
      let done = false;
      return () => {
        if (done) return;
        done = true;
        detach();
        fleet.announce();
      };
    },
    pendingApprovals() {
      return [...core.pendingApprovals(), ...fleet.remotePrompts()].sort((a, b) => a.requested_at - b.requested_at);
    },
    subscribeApprovals(listener) {
      const offCore = core.subscribeApprovals(listener);
      const offFleet = fleet.onApprovals(listener);
      return () => (offCore(), offFleet());
    },
    async decide(approvalId, decision) {
      const at = remotePrompt(approvalId);
      if (!at) return core.decide(approvalId, decision);
      if (decision.kind !== 'once' && decision.kind !== 'deny') {
        throw new HubError('fleet', 'Rejected', `a prompt of hub ${at.hub} can be approved once or denied from this panel`, { hint: `approve it for the session or always on hub ${at.hub}'s own panel, where its rules live` });
      }
      const body = { method: 'decide' as const, approval_id: at.id, decision: decision.kind, by: decision.by.slice(0, 256), ...(decision.reason ? { reason: decision.reason.slice(0, 2000) } : {}) };
      const got = (await fleet.request(at.hub, body)) as { granted?: unknown };
      return { approval_id: approvalId, granted: got.granted === true };
    },
    revealApprovalArgs(approvalId, by) {
      const at = remotePrompt(approvalId);
      if (!at) return core.revealApprovalArgs(approvalId, by);
      throw new HubError('fleet', 'Rejected', `the sensitive args of hub ${at.hub}'s prompt stay on that hub`, { hint: `reveal them on hub ${at.hub}'s own panel` });
    },
    async listChannels() {
      const [mine, theirs] = await Promise.all([core.listChannels(), remoteChannels()]);
      return [...mine, ...theirs.flatMap((t) => t.channels)];
    },
    async overview() {
      // Another hub's drivers, as the panel lists them: `<hub>/<driver>`, healthy while it answers.
      const [mine, theirs] = await Promise.all([core.overview(), remoteChannels()]);
      const remoteDrivers = theirs.flatMap(({ hub, channels }) =>
        [...new Set(channels.map((c) => driverOfChannel(c.channel)))].map((driver) => ({
          driver,
          info: { id: driver, kind: 'both' as const, summary: `a driver of hub ${hub}` },
          health: { driver, ok: true, lines: [`on hub ${hub} of the fleet`] },
          channels: channels.filter((c) => driverOfChannel(c.channel) === driver),
        })),
      );
      return [...mine, ...remoteDrivers];
    },
    async describe(channel, op, agent) {
      const at = remote(channel);
      if (!at) return core.describe(local(channel), op, agent);
      try {
        const got = (await fleet.request(at.hub, { method: 'describe', channel: at.channel, ...(op ? { op } : {}), ...(agent ? { agent: declared(agent) } : {}) })) as unknown as Awaited<ReturnType<Hub['describe']>>;
        return { ...got, channel: prefixed(at.hub, got.channel) };
      } catch (e) {
        return refused(channel, op ?? '', agent, e);
      }
    },
    async ops(channel) {
      return (await overrides.describe!(channel)).ops;
    },
    async lookAt(channel) {
      // Another hub's window is looked at through a recorded screenshot op, not a live frame.
      return remote(channel) ? undefined : core.lookAt(local(channel));
    },
    invoke(channel, op, args, options) {
      const at = remote(channel);
      if (!at) return core.invoke(local(channel), op, args, options);
      const body = { method: 'invoke' as const, channel: at.channel, op, args: args ?? {}, agent: declared(options.agent), ...(options.expect ? { expect: options.expect } : {}), ...(options.interaction ? { interaction: options.interaction } : {}) };
      return call(at, channel, op, body, options);
    },
    async send(channel, request: HubSendRequest, options) {
      const at = remote(channel);
      if (!at) return core.send(local(channel), request, options);
      const body = { method: 'send' as const, channel: at.channel, message: request.message, ...(request.reply_hint ? { reply_hint: request.reply_hint } : {}), agent: declared(options.agent) };
      return (await call(at, channel, 'send', body, options)) as unknown as SendReceipt;
    },
    async doctor(): Promise<HubDoctor> {
      const report = await core.doctor();
      const s = fleet.status();
      if (!s.problem) return report;
      return { ...report, warnings: [...(report.warnings ?? []), `fleet ${s.name}: ${s.problem}`] };
    },
    async close() {
      await fleet.close();
      await core.close();
    },
  };
  return new Proxy(core as FleetHub, {
    get(target, prop) {
      if (Object.prototype.hasOwnProperty.call(overrides, prop)) return overrides[prop as keyof FleetHub];
      const value: unknown = Reflect.get(target, prop, target);
      // The hub's methods use private state: they run on the hub itself, not on this proxy.
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
