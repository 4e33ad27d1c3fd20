/**
 * A hub's membership in a fleet of hubs on NATS (docs/fleet.md): joining (with backoff, naming
 * the server's reason for a refusal), losing and regaining the server, and leaving; it wires the
 * parts that share the connection: presence, prompts, calls to and from other hubs, and history.
 */
import { connect } from 'nats';
import type { NatsConnection } from 'nats';
import type { FleetSettings } from '../config';
import type { Hub } from '../hub';
import { Emitter } from '../../../shared/emitter';
import type { AuditEntry, Disposer, FleetChange, FleetHistoryEntry, FleetMembership } from '../types';
import { fleetAuth, fleetTrust } from './auth';
import { startHistoryPublisher, startHistoryReader } from './history';
import { sharedTrust } from './keys';
import type { FleetTrust } from './keys';
import { believeWith } from './link';
import type { FleetLink, Received } from './link';
import { subjects } from './messages';
import { Presence } from './presence';
import { FleetPrompts } from './prompts';
import { FleetRequests, unavailable } from './request';
import { FleetServer } from './serve';
import { Witness } from './witness';
import type { FleetCheckpoint } from './witness';

/** What the Fleet view and `doctor` say of a fleet without a roster. */
export const SHARED_TOKEN_WARNING = 'members of this fleet can speak for each other (shared token, no roster) — hint: uplink fleet init';
/** NATS users per hub authenticate connections, but without a roster no message says which hub wrote it. */
const CREDS_WARNING = 'members of this fleet can speak for each other (per-hub credentials, but no roster: messages are unsigned) — hint: uplink fleet init';

export interface FleetOptions {
  /** How often this hub says it is present; a hub unheard for three beats is gone (default 2000 ms). */
  heartbeatMs?: number;
  /** How long `channel_list` waits for each other hub (default 3000 ms). */
  listTimeoutMs?: number;
  /** One line per fleet event (connected, lost, a name taken twice); never the token. */
  log?: (line: string) => void;
}

export class Fleet implements FleetLink {
  readonly settings: FleetSettings;
  /** How long a listing waits for each other hub. */
  readonly listTimeoutMs: number;
  readonly presence: Presence;
  readonly prompts: FleetPrompts;
  readonly requests: FleetRequests;
  readonly #server: FleetServer;
  readonly #witness: Witness;
  readonly #core: Hub;
  /** Shared until `start` has read the seed and roster. */
  #trust: FleetTrust = sharedTrust();
  readonly #log: ((line: string) => void) | undefined;
  #nc: NatsConnection | undefined;
  #connected = false;
  #problem: string | undefined = 'not connected yet';
  #fleetListeners = new Emitter<FleetChange>();
  #publisher: ReturnType<typeof startHistoryPublisher> | undefined;
  #reader: ReturnType<typeof startHistoryReader> | undefined;
  #ownApprovals: Disposer | undefined;
  #attempts = 0;
  #closed = false;

  constructor(core: Hub, settings: FleetSettings, options: FleetOptions) {
    this.#core = core;
    this.settings = settings;
    this.listTimeoutMs = options.listTimeoutMs ?? 3000;
    this.#log = options.log;
    this.presence = new Presence(this, core, options.heartbeatMs ?? 2000, {
      appeared: (hub) => void this.prompts.sync(hub),
      gone: (hub, why) => {
        this.prompts.withdrawAll(hub, `${why}; it still decides its own prompt`);
        this.requests.fail(
          () => unavailable(`${why}, during a call to it; whether the call ran there is unknown`, `look at hub ${hub}'s audit log before retrying`),
          hub,
        );
      },
      changed: () => this.#changed(),
    });
    this.requests = new FleetRequests(this, this.presence);
    this.prompts = new FleetPrompts(this, this.presence, (hub) => this.requests.request(hub, { method: 'prompts' }, undefined, this.listTimeoutMs));
    this.#server = new FleetServer(this, core);
    this.#witness = new Witness(this, core.dataDir);
  }

  // ── the link every part shares ─────────────────────────────────────────────────────────
  get name(): string {
    return this.settings.name;
  }

  get nc(): NatsConnection | undefined {
    return this.#nc;
  }

  get connected(): boolean {
    return this.#connected;
  }

  get problem(): string | undefined {
    return this.#problem;
  }

  get trust(): FleetTrust {
    return this.#trust;
  }

  get inboxPrefix(): string | undefined {
    // With a roster the server lets each hub subscribe under its own prefix only, so no member reads another's replies.
    return this.#trust.signed ? `_INBOX.${this.settings.name}` : undefined;
  }

  send(subject: string, data: Uint8Array, reply?: string): void {
    const nc = this.#nc;
    if (!nc) throw new Error('not connected');
    const headers = this.#trust.seal(subject, data);
    nc.publish(subject, data, { ...(reply ? { reply } : {}), ...(headers ? { headers } : {}) });
  }

  believe(msg: Received, hub: string, live = true): boolean {
    return believeWith(this.#trust, msg, hub, live);
  }

  log(line: string): void {
    this.#log?.(`uplink fleet: ${line}`);
  }

  // ── joining and leaving ────────────────────────────────────────────────────────────────
  start(): void {
    let auth: ReturnType<typeof fleetAuth>;
    try {
      this.#trust = fleetTrust(this.settings, this.#core.dataDir);
      auth = fleetAuth(this.settings, this.#core.dataDir);
    } catch (e) {
      this.#problem = `the fleet's credentials cannot be used: ${(e as Error).message}`;
      this.log(this.#problem);
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
        ...(this.inboxPrefix ? { inboxPrefix: this.inboxPrefix } : {}),
        reconnect: true,
        maxReconnectAttempts: -1,
        reconnectDelayHandler: backoff,
        pingInterval: 10_000,
      }).then(
        (nc) => this.#joined(nc),
        (e: unknown) => {
          const problem = `cannot join the fleet at ${url}: ${(e as Error).message}`;
          if (problem !== this.#problem) this.log(problem);
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
    nc.subscribe(subjects.call(name), { queue: 'owner', callback: (_e, msg) => void this.#server.serve(msg) });
    nc.subscribe(subjects.cancel(name), { callback: (_e, msg) => this.#server.cancelled(msg) });
    nc.subscribe(subjects.allPresence, { callback: (_e, msg) => this.presence.heard(msg) });
    nc.subscribe(subjects.allPrompts, { callback: (_e, msg) => this.prompts.heard(msg) });
    if (this.#trust.signed) nc.subscribe(subjects.allCheckpoints, { callback: (_e, msg) => this.#witness.heard(msg) });
    // This hub's prompts go to every panel of the fleet as they are raised and decided.
    this.#ownApprovals = this.#core.subscribeApprovals((event) => this.prompts.publish(event));
    // History: this hub's audit goes to the fleet's stream; every hub's comes back merged.
    const core = this.#core;
    const source = {
      after: (cursor: number, limit: number) => core.queryAudit({ after: cursor, limit }).entries,
      newest: () => core.queryAudit({ limit: 1 }).entries[0]?.id ?? 0,
      subscribe: (listener: (entry: AuditEntry) => void) => core.subscribe(listener),
    };
    const log = (line: string): void => this.log(line);
    const trust = this.#trust;
    this.#publisher = startHistoryPublisher({ nc, hub: name, source, log, trust });
    this.#reader = startHistoryReader({ nc, log, trust, onEntry: (entry) => this.#fleetListeners.emit({ type: 'entry', entry }) });
    this.presence.start();
    this.presence.announce();
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
    this.log(`joined the fleet at ${this.settings.url} as ${this.settings.name}`);
    this.presence.announce();
    this.#changed();
  }

  #down(problem: string): void {
    if (!this.#connected) return;
    this.#connected = false;
    this.#problem = problem;
    this.log(problem);
    for (const hub of this.presence.lostAll("this hub lost the fleet's NATS server")) {
      this.prompts.withdrawAll(hub, `hub ${hub} is out of reach (this hub lost the fleet's NATS server); it still decides its own prompt`);
    }
    this.#changed();
    this.requests.fail((hub) =>
      unavailable(
        `the fleet's NATS server was lost during a call to hub ${hub}; whether it ran there is unknown`,
        `look at hub ${hub}'s audit log, and retry once the fleet is back`,
      ),
    );
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.presence.stop();
    this.#server.abortAll();
    this.#ownApprovals?.();
    const nc = this.#nc;
    if (!nc) return;
    this.presence.announce(true);
    this.#down('this hub left the fleet');
    await this.#publisher?.close();
    await this.#reader?.close();
    await nc.flush().catch(() => undefined);
    await nc.close().catch(() => undefined);
  }

  /** Tells the fleet this hub's audit checkpoint, signed, for the others to witness. */
  publishCheckpoint(c: FleetCheckpoint): void {
    this.#witness.publish(c);
  }

  // ── what the panel sees of the fleet ───────────────────────────────────────────────────
  status(): FleetMembership {
    const problem = this.#problem;
    const signed = Boolean(this.settings.seed_file);
    return {
      member: true,
      name: this.settings.name,
      url: this.settings.url,
      connected: this.#connected,
      ...(problem ? { problem } : {}),
      members: this.presence.members(),
      identity: signed ? 'keys' : 'shared',
      ...(signed ? {} : { warning: this.settings.creds_file ? CREDS_WARNING : SHARED_TOKEN_WARNING }),
      dropped: this.#trust.dropped(),
    };
  }

  /** The fleet's merged history, newest first (empty until this hub has joined). */
  history(query: { hub?: string; before?: number; limit?: number }): { entries: FleetHistoryEntry[]; next_before?: number } {
    return this.#reader?.query(query) ?? { entries: [] };
  }

  onFleet(listener: (change: FleetChange) => void): Disposer {
    return this.#fleetListeners.on(listener);
  }

  #changed(): void {
    // The status is built only when a panel listens.
    if (this.#fleetListeners.size) this.#fleetListeners.emit({ type: 'status', status: this.status() });
  }
}
