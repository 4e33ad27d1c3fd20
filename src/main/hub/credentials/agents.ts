/**
 * Named agent credentials in `<data dir>/agents.json` (0600, in the 0700 data dir): for each agent
 * its id, who created it and when, whether it was revoked, and the SHA-256 of its token. The token
 * itself is shown once, at creation, and never stored. A call's agent is the credential it
 * authenticated with; the MCP client's declared name is only shown beside it.
 *
 * The hub masks a named agent's token in what drivers return only once it has seen it in clear: the
 * process that created it, or that it authenticated (`mask.ts`); the stored hash cannot be matched.
 *
 * The file is re-read when it changes (the CLI creates agents beside a running hub). A file that
 * cannot be read or does not validate accepts no agent token at all until it is fixed.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDataDir } from '../data-dir';
import { HubError } from '../errors';
import { readSmallFile, writeFileAtomic } from '../files';
import { CLI_AGENT_ID, OPERATOR_AGENT_ID, UNAUTHENTICATED } from '../call-context';
import { liveSecrets } from './mask';
import type { SecretMask } from './mask';

/** At most this many agents (revoked ones included) are kept. */
export const MAX_AGENTS = 256;
/** An agent id: identifier-like, so it reads the same in rules, logs and filters. */
export const AGENT_ID_PATTERN = /^[a-z][a-z0-9_-]{0,63}$/;
/**
 * Ids the hub gives its own callers (the data dir's token, stdio, the CLI and the hub's own records,
 * the panel's operator, a caller no credential proved): an agent credential may not take them, or
 * its records would read as theirs.
 */
export const RESERVED_AGENT_IDS = ['default', 'stdio', 'cli', CLI_AGENT_ID, OPERATOR_AGENT_ID, 'panel', 'unknown', UNAUTHENTICATED];
/** A larger file is not an agents file. */
const MAX_FILE_BYTES = 1024 * 1024;

/** One stored agent credential (never the token). */
export interface AgentRecord {
  id: string;
  created_at: string;
  created_by: string;
  revoked_at?: string;
  token_sha256: string;
}

/** Who a bearer token authenticated as. */
export interface AgentCredential {
  /** The agent id (`default` for the data dir's MCP token, a named agent's id otherwise). */
  id: string;
}

/** An agent as the operator lists it. */
export type AgentSummary = Omit<AgentRecord, 'token_sha256'>;

const sha256 = (text: string): Buffer => createHash('sha256').update(text).digest();

function invalid(path: string, why: string): string {
  return `${path}: ${why}`;
}

/** The records of a parsed file, or why it is not a valid agents file. */
function validate(path: string, raw: unknown): AgentRecord[] | string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return invalid(path, 'the top level must be a JSON object');
  const agents = (raw as { agents?: unknown }).agents;
  if (!Array.isArray(agents)) return invalid(path, '/agents must be an array');
  if (agents.length > MAX_AGENTS) return invalid(path, `/agents has ${agents.length} entries (at most ${MAX_AGENTS})`);
  const seen = new Set<string>();
  for (const [i, a] of agents.entries()) {
    const r = a as Partial<AgentRecord>;
    if (typeof a !== 'object' || a === null) return invalid(path, `/agents/${i} must be an object`);
    if (typeof r.id !== 'string' || !AGENT_ID_PATTERN.test(r.id)) return invalid(path, `/agents/${i}/id is not a valid agent name`);
    if (RESERVED_AGENT_IDS.includes(r.id)) return invalid(path, `/agents/${i}/id "${r.id}" is reserved for Uplink's own callers`);
    if (seen.has(r.id)) return invalid(path, `/agents has the agent "${r.id}" twice`);
    seen.add(r.id);
    if (typeof r.token_sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(r.token_sha256)) return invalid(path, `/agents/${i}/token_sha256 must be 64 hex digits`);
    if (typeof r.created_at !== 'string' || typeof r.created_by !== 'string') return invalid(path, `/agents/${i} needs created_at and created_by strings`);
    if (r.revoked_at !== undefined && typeof r.revoked_at !== 'string') return invalid(path, `/agents/${i}/revoked_at must be a string`);
  }
  return agents as AgentRecord[];
}

/** Checks a name given for a new agent; throws an `Invalid` the operator can act on. */
export function checkAgentName(name: unknown): string {
  if (typeof name !== 'string' || !AGENT_ID_PATTERN.test(name)) {
    throw new HubError('core', 'Invalid', `agent name ${JSON.stringify(String(name).slice(0, 80))} is not valid`, {
      hint: 'use 1 to 64 characters: a lowercase letter, then lowercase letters, digits, - or _ (e.g. claude-build)',
    });
  }
  if (RESERVED_AGENT_IDS.includes(name)) {
    throw new HubError('core', 'Invalid', `agent name "${name}" is reserved for Uplink's own callers`, {
      hint: `pick another name (reserved: ${RESERVED_AGENT_IDS.join(', ')})`,
    });
  }
  return name;
}

/** The agents file: read on change, written atomically. */
export class AgentCredentialStore {
  readonly path: string;
  #dir: string;
  #stamp = '';
  #records: AgentRecord[] = [];
  #error: string | undefined;
  #secrets: SecretMask;
  /** Tokens seen in clear (created or authenticated here), by their hash: revoking one unregisters it. */
  #seen = new Map<string, string>();

  constructor(dataDir: string) {
    this.#dir = dataDir;
    this.path = join(dataDir, 'agents.json');
    this.#secrets = liveSecrets(dataDir);
  }

  #sawToken(token: string, hash: string): void {
    if (this.#seen.has(hash)) return;
    this.#seen.set(hash, token);
    this.#secrets.add(token);
  }

  /** Why the file is unusable (no agent token is accepted meanwhile), if it is. */
  /** Doctor's `agents` line: whether named agents' tokens are accepted. */
  health(): { ok: boolean; path: string; error?: string } {
    const error = this.error();
    return error === undefined
      ? { ok: true, path: this.path }
      : { ok: false, path: this.path, error: `${error} — no named agent token is accepted until it is fixed` };
  }

  error(): string | undefined {
    this.#load();
    return this.#error;
  }

  /** Every agent, revoked ones included, without their token hashes. */
  list(): AgentSummary[] {
    this.#load();
    if (this.#error) throw this.#broken();
    return this.#records.map(({ token_sha256: _hash, ...rest }) => rest);
  }

  /** The agent a bearer token belongs to, unless it is revoked, unknown or the file is broken. */
  authenticate(bearer: string | undefined): AgentCredential | undefined {
    if (!bearer || bearer.length > 1024) return undefined;
    this.#load();
    if (this.#error) return undefined;
    const hash = sha256(bearer);
    let found: AgentRecord | undefined;
    // Every record is compared, in constant time, so timing says nothing about which one matched.
    for (const r of this.#records) if (timingSafeEqual(hash, Buffer.from(r.token_sha256, 'hex')) && !found) found = r;
    if (!found || found.revoked_at !== undefined) return undefined;
    this.#sawToken(bearer, found.token_sha256);
    return { id: found.id };
  }

  /** Creates an agent (a revoked one of the same name is replaced); returns its token, shown once. */
  create(name: string, by: string, now: number): { id: string; token: string } {
    const id = checkAgentName(name);
    const token = randomBytes(32).toString('base64url');
    this.#edit((records) => {
      const existing = records.find((r) => r.id === id);
      if (existing && existing.revoked_at === undefined) {
        throw new HubError('core', 'Rejected', `agent "${id}" already exists`, {
          hint: `revoke it first (\`uplink agents revoke ${id}\`) to issue a new token, or pick another name`,
        });
      }
      let next = records.filter((r) => r.id !== id);
      if (next.length >= MAX_AGENTS) {
        // Room is made from revoked agents, oldest first; live credentials are never dropped.
        const oldestRevoked = next.find((r) => r.revoked_at !== undefined);
        if (!oldestRevoked) throw new HubError('core', 'Unavailable', `there are already ${MAX_AGENTS} agents`, { hint: 'revoke agents you no longer use' });
        next = next.filter((r) => r !== oldestRevoked);
      }
      next.push({ id, created_at: new Date(now).toISOString(), created_by: by.slice(0, 200), token_sha256: sha256(token).toString('hex') });
      return next;
    });
    this.#sawToken(token, sha256(token).toString('hex'));
    return { id, token };
  }

  /** Revokes an agent: its token is refused from now on. */
  revoke(name: string, now: number): void {
    let hash: string | undefined;
    this.#edit((records) => {
      const r = records.find((x) => x.id === name);
      if (!r) throw new HubError('core', 'NotFound', `no agent "${String(name).slice(0, 80)}"`, { hint: 'list them with `uplink agents`' });
      if (r.revoked_at !== undefined)
        throw new HubError('core', 'Rejected', `agent "${name}" was already revoked at ${r.revoked_at}`, { hint: 'nothing to do' });
      hash = r.token_sha256;
      return records.map((x) => (x === r ? { ...x, revoked_at: new Date(now).toISOString() } : x));
    });
    // A revoked token opens nothing any more: it is no longer a live secret.
    if (hash !== undefined) {
      this.#secrets.delete(this.#seen.get(hash));
      this.#seen.delete(hash);
    }
  }

  #broken(): HubError {
    return new HubError('core', 'Unavailable', `${this.#error}; no agent token is accepted until it is fixed`, {
      hint: `fix or remove ${this.path} (removing it drops every named agent)`,
    });
  }

  /** Reads the file fresh, applies `edit`, writes it atomically. Refuses while the file is broken. */
  #edit(edit: (records: AgentRecord[]) => AgentRecord[]): void {
    this.#stamp = '';
    this.#load();
    if (this.#error) throw this.#broken();
    const records = edit(this.#records);
    ensureDataDir(this.#dir);
    writeFileAtomic(this.path, `${JSON.stringify({ agents: records }, null, 2)}\n`, 0o600);
    this.#stamp = '';
  }

  /** Re-reads the file when its identity, size or mtime changed. */
  #load(): void {
    let stamp = 'absent';
    try {
      const s = statSync(this.path);
      stamp = `${s.ino}:${s.size}:${s.mtimeMs}`;
    } catch {
      // No file: no named agents.
    }
    if (stamp === this.#stamp) return;
    this.#stamp = stamp;
    this.#records = [];
    this.#error = undefined;
    if (!existsSync(this.path)) return;
    try {
      const result = validate(this.path, JSON.parse(readSmallFile(this.path, MAX_FILE_BYTES)));
      if (typeof result === 'string') this.#error = result;
      else this.#records = result;
    } catch (e) {
      this.#error = invalid(this.path, `cannot be read (${(e as Error).message})`);
    }
  }
}
