/**
 * The Streamable HTTP MCP sessions of one hub server, shared fairly: a total cap, a cap per
 * credential, a reserve for credentials that hold none, and idle sessions closed first.
 */
import type { Server as McpServer } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { SessionEvents } from './event-store';

/** An MCP session idle this long (no request in flight) is closed: clients vanish without DELETE. */
const SESSION_IDLE_MS = 10 * 60_000;
/** Open MCP sessions at most; past it the longest-idle one goes. */
const MAX_SESSIONS = 256;
/**
 * Of the open sessions, a credential that already holds one may not take the last ones: they are
 * kept for credentials that hold none, so a token opening session after session (each busy with a
 * long call) cannot lock every other agent out. One in sixteen, at least one.
 */
const RESERVED_FOR_NEWCOMERS = (max: number): number => Math.max(1, Math.floor(max / 16));

/** One Streamable HTTP MCP session. */
export interface McpSession {
  transport: StreamableHTTPServerTransport;
  server: McpServer;
  lastSeen: number;
  inflight: number;
  /** The agent that opened it. */
  agent_id: string;
  /** What its streams sent, for a client that reconnects with Last-Event-ID. */
  events: SessionEvents;
}

/** Why a credential gets no new session: the status and the one-line error. */
export interface Refusal {
  status: 429 | 503;
  message: string;
  hint: string;
}

/** The open sessions, by id. */
export class McpSessions {
  readonly #sessions = new Map<string, McpSession>();
  /** Sessions admitted whose initialize is still being answered: counted, never closed. */
  readonly #opening = new Set<McpSession>();
  readonly #max: number;
  readonly #perAgent: number;
  readonly #reserved: number;
  readonly #sweeper: ReturnType<typeof setInterval>;

  constructor(options: { max?: number; perAgent?: number; idleMs?: number }) {
    this.#max = options.max ?? MAX_SESSIONS;
    const asked = options.perAgent;
    this.#perAgent = Math.max(1, Math.min(this.#max, Number.isInteger(asked) ? asked! : Math.floor(this.#max / 2)));
    this.#reserved = RESERVED_FOR_NEWCOMERS(this.#max);
    const idleMs = options.idleMs ?? SESSION_IDLE_MS;
    this.#sweeper = setInterval(
      () => {
        const now = Date.now();
        for (const [id, s] of this.#sessions) if (s.inflight === 0 && now - s.lastSeen > idleMs) this.#drop(id, s);
      },
      Math.min(60_000, Math.max(10, idleMs / 2)),
    );
    this.#sweeper.unref();
  }

  get(id: string): McpSession | undefined {
    return this.#sessions.get(id);
  }

  set(id: string, session: McpSession): void {
    this.#sessions.set(id, session);
  }

  delete(id: string): void {
    this.#sessions.delete(id);
  }

  values(): IterableIterator<McpSession> {
    return this.#sessions.values();
  }

  /** Counted from admission on: concurrent initializes must not all fit in the same free slot. */
  opening(session: McpSession): void {
    this.#opening.add(session);
  }

  opened(session: McpSession): void {
    this.#opening.delete(session);
  }

  stopSweeping(): void {
    clearInterval(this.#sweeper);
  }

  /**
   * Makes room for one more session of `agent`, or says why there is none. A credential holds at
   * most its cap (at the cap its own longest-idle one goes); one that holds any leaves the last
   * reserved ones for credentials that hold none; past the total the longest-idle session goes,
   * the credential's own first.
   */
  admit(agent: string): Refusal | undefined {
    const own = (): Array<[string, McpSession]> => [...this.#sessions].filter(([, s]) => s.agent_id === agent);
    const held = (): number => own().length + [...this.#opening].filter((s) => s.agent_id === agent).length;
    const max = this.#max;
    if (held() >= this.#perAgent) {
      const victim = idlest(own());
      if (!victim) {
        return {
          status: 429,
          message: `credential ${agent} already has ${this.#perAgent} MCP sessions open and busy, its cap (of ${max} in all)`,
          hint: 'close MCP clients of this credential you no longer use, or wait for one of its calls to end; each agent should connect with a token of its own, which the operator issues',
        };
      }
      this.#drop(...victim);
    }
    for (;;) {
      const holds = held();
      const open = this.#sessions.size + this.#opening.size;
      if (open < (holds === 0 ? max : max - this.#reserved)) return undefined;
      const victim = idlest(own()) ?? idlest(this.#sessions);
      if (!victim) {
        return holds === 0 || open >= max
          ? { status: 503, message: `all ${max} MCP sessions are open and busy`, hint: 'retry in a moment, or close MCP clients you no longer use' }
          : {
              status: 503,
              message: `${open} of ${max} MCP sessions are open and busy, and the last ${this.#reserved} are kept for agents that hold none`,
              hint: `retry in a moment, or close MCP clients of credential ${agent} you no longer use`,
            };
      }
      this.#drop(...victim);
    }
  }

  #drop(id: string, s: McpSession): void {
    this.#sessions.delete(id);
    void s.server.close().catch(() => undefined);
  }
}

/** The longest-idle of these sessions with nothing in flight (busy ones are never closed). */
function idlest(entries: Iterable<[string, McpSession]>): [string, McpSession] | undefined {
  let found: [string, McpSession] | undefined;
  for (const e of entries) if (e[1].inflight === 0 && (!found || e[1].lastSeen < found[1].lastSeen)) found = e;
  return found;
}
