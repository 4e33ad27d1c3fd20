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
import type { JsonValue } from '../kernel';
import { DRIVER_ERROR_KINDS, driverOfChannel } from '../drivers';
import type { ChannelEntry, DriverErrorKind, SendReceipt } from '../drivers';
import { checkBounds } from './bounds';
import type { FleetSettings } from './config';
import { fleetAuth } from './fleet-auth';
import { HubError, toHubError } from './errors';
import type { Hub } from './hub';
import type { AgentIdentity, CallOptions, HubDoctor, HubSendRequest } from './types';
import { decode, encode, MAX_REPLY_BYTES, MAX_REQUEST_BYTES, PROTOCOL_VERSION, subjects } from './fleet-messages';
import type { FleetAgent, FleetErrorBody, FleetReply, FleetRequest } from './fleet-messages';

export { readFleetToken } from './fleet-auth';

export interface FleetOptions {
  /** How often this hub says it is present; a hub unheard for three beats is gone (default 2000 ms). */
  heartbeatMs?: number;
  /** How long `channel_list` waits for each other hub (default 3000 ms). */
  listTimeoutMs?: number;
  /** One line per fleet event (connected, lost, a name taken twice); never the token. */
  log?: (line: string) => void;
}

/** Who is in the fleet now, as this hub sees it. */
export interface FleetStatus {
  name: string;
  url: string;
  connected: boolean;
  /** Why this hub is not in the fleet now (unreachable since …, a bad token file). */
  problem?: string;
  hubs: Array<{ hub: string; since: number }>;
}

/** A hub that is a fleet member: the Hub interface, plus who is connected. */
export type FleetHub = Hub & { fleetStatus(): FleetStatus };

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
  #peers = new Map<string, { instance: string; since: number; seen: number }>();
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
    this.#timer = setInterval(() => this.#beat(), this.#options.heartbeatMs);
    this.#timer.unref?.();
    this.#announce();
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'disconnect') this.#down(`the fleet's NATS server ${this.settings.url} is unreachable since ${new Date().toISOString()}`);
        else if (s.type === 'reconnect') this.#up();
      }
    })().catch(() => undefined);
  }

  #up(): void {
    this.#connected = true;
    this.#attempts = 0;
    this.#problem = undefined;
    this.#log(`joined the fleet at ${this.settings.url} as ${this.settings.name}`);
    this.#announce();
  }

  #down(problem: string): void {
    if (!this.#connected) return;
    this.#connected = false;
    this.#problem = problem;
    this.#log(problem);
    this.#peers.clear();
    for (const [id, p] of this.#pending) {
      this.#pending.delete(id);
      p.fail(unavailable(`the fleet's NATS server was lost during a call to hub ${p.hub}; whether it ran there is unknown`, `look at hub ${p.hub}'s audit log, and retry once the fleet is back`));
    }
  }

  #announce(leaving = false): void {
    if (!this.#nc || !this.#connected) return;
    try {
      this.#nc.publish(subjects.presence(this.settings.name), encode({ v: PROTOCOL_VERSION, hub: this.settings.name, instance: this.#instance, since: this.#since, ...(leaving ? { leaving } : {}) }));
    } catch {
      // Closed meanwhile: the next beat (or nobody) says it.
    }
  }

  #beat(): void {
    this.#announce();
    const stale = Date.now() - 3 * this.#options.heartbeatMs;
    for (const [hub, p] of this.#peers) if (p.seen < stale) this.#gone(hub, `hub ${hub} has not been heard from for ${Math.round((Date.now() - p.seen) / 1000)} s`);
  }

  #gone(hub: string, why: string): void {
    this.#peers.delete(hub);
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
    this.#peers.set(p.hub, { instance: p.instance, since: p.since, seen: Date.now() });
    // A newcomer learns of this hub at once rather than at the next beat.
    if (!known) this.#announce();
  }

  status(): FleetStatus {
    return {
      name: this.settings.name,
      url: this.settings.url,
      connected: this.#connected,
      ...(this.#problem ? { problem: this.#problem } : {}),
      hubs: [...this.#peers].map(([hub, p]) => ({ hub, since: p.since })).sort((a, b) => a.hub.localeCompare(b.hub)),
    };
  }

  hubs(): string[] {
    return [...this.#peers.keys()].sort();
  }

  // ── calls to other hubs ─────────────────────────────────────────────────────────────────
  /** Sends one request to `hub` and waits for its reply; fails at once when the hub or NATS is gone. */
  request(hub: string, body: FleetBody, signal?: AbortSignal, timeoutMs?: number): Promise<JsonValue> {
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
          if (!reply || reply.id !== id) return;
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
    try {
      reply = { v: PROTOCOL_VERSION, id: req.id, ok: true, result: await this.#run(req, controller.signal) };
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

  async #run(req: FleetRequest, signal: AbortSignal): Promise<JsonValue> {
    const core = this.#core;
    switch (req.method) {
      case 'channels':
        return (await core.listChannels()) as unknown as JsonValue;
      case 'describe':
        return (await core.describe(req.channel, req.op, req.agent ? remoteAgent(req.from, req.agent) : undefined)) as unknown as JsonValue;
      case 'invoke': {
        const options: CallOptions = { agent: remoteAgent(req.from, req.agent), signal, ...(req.expect ? { expect: req.expect } : {}), ...(req.interaction ? { interaction: req.interaction as CallOptions['interaction'] } : {}) };
        return core.invoke(req.channel, req.op, req.args, options);
      }
      case 'send':
        return (await core.send(req.channel, { message: req.message, ...(req.reply_hint ? { reply_hint: req.reply_hint } : {}) }, { agent: remoteAgent(req.from, req.agent), signal })) as unknown as JsonValue;
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
    const nc = this.#nc;
    if (!nc) return;
    this.#announce(true);
    this.#down('this hub left the fleet');
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
  const call = async (at: { hub: string; channel: string }, full: string, op: string, body: FleetBody, options: CallOptions): Promise<JsonValue> => {
    try {
      checkBounds(full, op, 'args' in body ? body.args : undefined);
      return await fleet.request(at.hub, body, options.signal);
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

  const overrides: Partial<FleetHub> = {
    fleetStatus: () => fleet.status(),
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
