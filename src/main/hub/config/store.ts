/**
 * `<data dir>/config.json`: loaded and validated with ajv, watched and reloaded on change. A broken
 * file never replaces the last good config; the error (with its location) is kept for `doctor`.
 * Writes (new "always" rules, revokes, the timeout) are atomic (temp file + rename) and preserve
 * every other section. Each good load is also copied to `config.last-good.json`, which a later
 * start uses when the file is broken by then (so "last good" holds across restarts too).
 *
 * It fails closed: the file holds the operator's guards (read_deny, write grants, rules), so a file
 * that is emptied, deleted after a config was loaded, unreadable, oversized or nested too deeply is
 * broken, never "the defaults". Only a data dir where no config was ever loaded runs on defaults.
 */
import { jsonDepth } from '../bounds';
import { chmodSync, existsSync, readFileSync, watch } from 'node:fs';
import type { FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { schemaValidator } from '../../kernel';
import type { JsonSchema } from '../../kernel';
import { Emitter } from '../../../shared/emitter';
import { readBoundedFile, writeFileAtomic } from '../files';
import { jsonErrorLocation } from './json-locate';
import type { Disposer, StandingRule } from '../types';

/** Default approval timeout: two minutes, then an unanswered prompt is denied. */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 120_000;
/** Default deadline for one driver call. */
export const DEFAULT_DRIVER_TIMEOUT_MS = 90_000;
/** A config is a few KiB; anything past this is a mistake or an attack on the parser. */
export const MAX_CONFIG_BYTES = 1024 * 1024;
/** Nesting bound, checked before JSON.parse, ajv and the error locator (all recursive) see the text. */
export const MAX_CONFIG_DEPTH = 64;

/** The deepest `[`/`{` nesting of a JSON text, counting only brackets outside strings. */

/** The config file's text, or its size when it is over `limit` (an oversized file is not read whole). */
function readBounded(path: string, limit: number): { text: string } | { size: number } {
  const file = readBoundedFile(path, limit);
  if (!file.regular) throw new Error('not a regular file');
  // Tightened on load: the file names panes, grants and rules, which are nobody else's business.
  if ((file.mode & 0o077) !== 0) {
    try {
      chmodSync(path, 0o600);
    } catch {
      // Not ours to change (another owner): reading it is still fine.
    }
  }
  return file.bytes ? { text: file.bytes.toString('utf8') } : { size: file.size };
}

/** The config file as the hub reads it; driver sections are opaque here and validated by their schema. */
export interface UplinkConfig {
  approvals: { timeout_ms: number; rules: StandingRule[] };
  /** `drivers`: which drivers run (all when absent); read when the hub starts. */
  hub: { driver_timeout_ms: number; drivers?: string[] };
  fleet?: FleetSettings;
  [section: string]: unknown;
}

const RULE_SCHEMA = {
  type: 'object',
  required: ['id', 'channel', 'op'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 128 },
    channel: { type: 'string', minLength: 1 },
    op: { anyOf: [{ type: 'string', minLength: 1 }, { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } }] },
    agent: { type: 'string', minLength: 1 },
    // An exact JSON value or `{glob}`; the hub checks names against the ops when the panel saves one.
    args: { type: 'object', maxProperties: 16, propertyNames: { pattern: '^[A-Za-z0-9_.-]{1,64}$' } },
    created_at: { type: 'string' },
    created_by: { type: 'string' },
    note: { type: 'string' },
  },
};

/** Ids an external driver may not take: the built-in drivers' and `core` (the hub's own errors). */
export const RESERVED_DRIVER_IDS = ['core', 'tmux', 'desktop'];

/** One out-of-process driver the operator configured (docs/driver-protocol.md, Admission). */
export interface ExternalDriverEntry {
  id: string;
  command: string[];
  integrity?: { file: string; sha256: string };
}

const EXTERNAL_DRIVER_SCHEMA = {
  type: 'object',
  required: ['id', 'command'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: '^[a-z][a-z0-9-]*$', maxLength: 64 },
    command: { type: 'array', minItems: 1, maxItems: 256, items: { type: 'string', minLength: 1, maxLength: 4096 } },
    integrity: {
      type: 'object',
      required: ['file', 'sha256'],
      additionalProperties: false,
      properties: { file: { type: 'string', minLength: 1, maxLength: 4096 }, sha256: { type: 'string', pattern: '^[0-9a-fA-F]{64}$' } },
    },
  },
};

/** How this hub joins a fleet of hubs on NATS (docs/fleet.md); read when the hub starts. */
export interface FleetSettings {
  /** `nats://host:port` or `tls://host:port` (TLS required then). */
  url: string;
  /** This hub's name in the fleet: its channels are `<name>/<channel>` to the other hubs. */
  name: string;
  /** A file holding the fleet's NATS token (0600); relative paths are under the data dir. Or `creds_file`. */
  token_file?: string;
  /** A NATS credentials file (user JWT + NKey seed, 0600), as `nsc` makes it. Or `token_file`. */
  creds_file?: string;
  /** The CA bundle (PEM) a `tls://` server's certificate is checked against; the system's CAs without it. */
  ca_file?: string;
}

const FLEET_SCHEMA = {
  type: 'object',
  required: ['url', 'name'],
  additionalProperties: false,
  properties: {
    url: { type: 'string', pattern: '^(nats|tls)://[^\\s/]+$', maxLength: 512 },
    name: { type: 'string', pattern: '^[a-z][a-z0-9-]*$', maxLength: 64 },
    token_file: { type: 'string', minLength: 1, maxLength: 4096 },
    creds_file: { type: 'string', minLength: 1, maxLength: 4096 },
    ca_file: { type: 'string', minLength: 1, maxLength: 4096 },
  },
};

/** Names that would make a hub's subjects (`uplink.<hub>.call`) collide with the fleet's shared ones. */
const RESERVED_FLEET_NAMES = ['history', 'presence', 'prompts'];

/** What the schema cannot say in words a person can act on: one way to authenticate, a usable name, a CA only for TLS. */
function fleetProblem(fleet: FleetSettings | undefined): string | undefined {
  if (!fleet) return undefined;
  if (fleet.token_file && fleet.creds_file) return '/fleet has both token_file and creds_file — hint: keep the one the NATS server expects and remove the other';
  if (!fleet.token_file && !fleet.creds_file) return '/fleet needs token_file or creds_file — hint: name the file holding the NATS token, or the .creds file from `nsc generate creds`';
  if (RESERVED_FLEET_NAMES.includes(fleet.name)) return `/fleet/name ${fleet.name} is a word the fleet's own subjects use — hint: choose another name, e.g. ${fleet.name}-1`;
  if (fleet.ca_file && !fleet.url.startsWith('tls://')) return '/fleet/ca_file is only used with a tls:// url — hint: write the url as tls://host:port, or remove ca_file';
  return undefined;
}

/** The hub's own sections; driver sections are added by `sectionSchemas`. */
function rootSchema(sectionSchemas: Record<string, JsonSchema>): Record<string, unknown> {
  return {
    type: 'object',
    properties: {
      $schema: { type: 'string' },
      approvals: {
        type: 'object',
        additionalProperties: false,
        properties: {
          timeout_ms: { type: 'integer', minimum: 1000, maximum: 86_400_000 },
          rules: { type: 'array', items: RULE_SCHEMA },
        },
      },
      hub: {
        type: 'object',
        additionalProperties: false,
        properties: {
          driver_timeout_ms: { type: 'integer', minimum: 100, maximum: 3_600_000 },
          drivers: { type: 'array', uniqueItems: true, items: { type: 'string', pattern: '^[a-z][a-z0-9-]*$' } },
        },
      },
      external_drivers: { type: 'array', maxItems: 64, items: EXTERNAL_DRIVER_SCHEMA },
      fleet: FLEET_SCHEMA,
      ...sectionSchemas,
    },
  };
}

function describeAjv(errors: ErrorObject[] | null | undefined): string {
  const e = errors?.[0];
  if (!e) return 'invalid';
  const where = e.instancePath || '/';
  return `${where} ${e.message ?? e.keyword}`;
}

/** Normalizes a validated raw object into the hub's view (defaults filled in). */
function normalize(raw: Record<string, unknown>): UplinkConfig {
  const approvals = (raw.approvals ?? {}) as Partial<UplinkConfig['approvals']>;
  const hub = (raw.hub ?? {}) as Partial<UplinkConfig['hub']>;
  return {
    ...raw,
    approvals: { timeout_ms: approvals.timeout_ms ?? DEFAULT_APPROVAL_TIMEOUT_MS, rules: approvals.rules ?? [] },
    hub: { driver_timeout_ms: hub.driver_timeout_ms ?? DEFAULT_DRIVER_TIMEOUT_MS, ...(hub.drivers ? { drivers: hub.drivers } : {}) },
  };
}

/** Loads, validates, watches and edits the config file. */
export class ConfigStore {
  readonly path: string;
  #validate: ValidateFunction;
  /** The built-in drivers' config sections, whose names no external driver may take. */
  #sections: string[];
  #current: UplinkConfig = normalize({});
  #error: string | undefined;
  #changes = new Emitter<UplinkConfig>();
  #errors = new Emitter<string>();
  #watcher: FSWatcher | undefined;
  #debounce: ReturnType<typeof setTimeout> | undefined;
  /** What is in use while the file is broken (said by `doctor` and the audit). */
  #fallback = 'the defaults are in use: no good config was loaded before';
  /** A config file was loaded by this process: its disappearance is then a breakage, not a reset. */
  #loaded = false;

  constructor(path: string, sectionSchemas: Record<string, JsonSchema> = {}) {
    this.path = path;
    this.lastGoodPath = path.replace(/(\.json)?$/, '.last-good.json');
    this.#validate = schemaValidator(rootSchema(sectionSchemas) as JsonSchema);
    this.#sections = Object.keys(sectionSchemas);
    // A file already broken at start: the last good copy a previous run saved stays in use, so
    // standing rules and driver guards (read_deny, write_allow) survive a restart over a bad edit.
    if (this.reload() !== undefined) this.#loadLastGood();
  }

  /** Where the last good config is kept across restarts (`config.last-good.json` beside it). */
  readonly lastGoodPath: string;

  /** What is in use while the file is broken, e.g. "the last good config stays in use". */
  fallback(): string {
    return this.#fallback;
  }

  /** The last good config. */
  get(): UplinkConfig {
    return this.#current;
  }

  /** The current load error (parse or validation, with its location), if the file is broken. */
  error(): string | undefined {
    return this.#error;
  }

  /** A live getter for one driver's section (drivers read it on every use). */
  section<T>(name: string): () => T | undefined {
    return () => this.#current[name] as T | undefined;
  }

  /** Calls `listener` after every successful reload. */
  onChange(listener: (config: UplinkConfig) => void): Disposer {
    return this.#changes.on(listener);
  }

  /** Re-reads the file; keeps the last good config when it is broken. Returns the error, if any. */
  reload(): string | undefined {
    const parsed = this.#readRaw();
    if ('error' in parsed) {
      const fresh = parsed.error !== this.#error;
      this.#error = parsed.error;
      if (fresh) this.#errors.emit(parsed.error);
      return parsed.error;
    }
    this.#error = undefined;
    if (parsed.file) this.#loaded = true;
    this.#current = normalize(parsed.raw);
    this.#fallback = 'the last good config stays in use';
    if (parsed.file) this.#saveLastGood(parsed.raw);
    this.#changes.emit(this.#current);
    return undefined;
  }

  /**
   * Keeps a copy of a config that loaded (0600, temp + rename); best effort. Never deleted: its
   * presence is also how a later start knows a config existed, so a deleted file reads as broken.
   */
  #saveLastGood(raw: Record<string, unknown>): void {
    const text = `${JSON.stringify(raw, null, 2)}\n`;
    try {
      if (existsSync(this.lastGoodPath) && readFileSync(this.lastGoodPath, 'utf8') === text) return;
      writeFileAtomic(this.lastGoodPath, text, 0o600);
    } catch {
      // A read-only data dir: the copy is a convenience; the live config is unaffected.
    }
  }

  /** Loads the copy saved by an earlier run, if it is still valid. */
  #loadLastGood(): void {
    try {
      const parsed = this.#parse(this.lastGoodPath);
      if ('error' in parsed) return;
      this.#current = normalize(parsed.raw);
      this.#fallback = `the last good config (saved in ${this.lastGoodPath}) stays in use`;
    } catch {
      // No copy (first run) or unreadable: the defaults stay, and `fallback()` says so.
    }
  }

  /** Calls `listener` when a (re)load fails with a new error. */
  onError(listener: (error: string) => void): Disposer {
    return this.#errors.on(listener);
  }

  /** Watches the file (directory watch, so atomic renames are seen) and reloads after changes. */
  watch(debounceMs = 150): Disposer {
    if (this.#watcher) return () => this.#unwatch();
    const name = basename(this.path);
    try {
      this.#watcher = watch(dirname(this.path), { persistent: false }, (_event, file) => {
        if (file !== null && file !== name) return;
        if (this.#debounce) clearTimeout(this.#debounce);
        this.#debounce = setTimeout(() => this.reload(), debounceMs);
      });
      this.#watcher.on('error', () => this.#unwatch());
    } catch {
      // The directory may not support watching (network fs); reloads then happen on writes only.
    }
    return () => this.#unwatch();
  }

  /**
   * Edits the file atomically: reads it fresh, applies `edit` to the raw object, validates and
   * writes temp + rename. Refuses while the file is broken, so a hand edit is never overwritten.
   */
  update(edit: (raw: Record<string, unknown>) => void): void {
    const parsed = this.#readRaw();
    if ('error' in parsed) {
      throw new Error(`${this.path} is broken (${parsed.error}) — hint: fix the file first (write {} to start from the defaults); ${this.#fallback}`);
    }
    const raw = parsed.raw;
    edit(raw);
    if (!this.#validate(raw)) throw new Error(`config edit would be invalid: ${describeAjv(this.#validate.errors)}`);
    writeFileAtomic(this.path, `${JSON.stringify(raw, null, 2)}\n`, 0o600);
    this.#error = undefined;
    this.#loaded = true;
    this.#current = normalize(raw);
    this.#fallback = 'the last good config stays in use';
    this.#saveLastGood(raw);
    this.#changes.emit(this.#current);
  }

  /** Stops watching. */
  close(): void {
    this.#unwatch();
  }

  #unwatch(): void {
    if (this.#debounce) clearTimeout(this.#debounce);
    this.#watcher?.close();
    this.#watcher = undefined;
  }

  #readRaw(): { raw: Record<string, unknown>; file: boolean } | { error: string } {
    if (!existsSync(this.path)) {
      // Never loaded anywhere (fresh install): the defaults. Loaded before, here or by an earlier
      // run: a deletion must not silently drop read_deny, grants and rules.
      if (!this.#loaded && !existsSync(this.lastGoodPath)) return { raw: {}, file: false };
      return { error: `${this.path} is missing (it held a config that was loaded before)` };
    }
    const parsed = this.#parse(this.path);
    return 'error' in parsed ? parsed : { raw: parsed.raw, file: true };
  }

  /** Reads, bounds, parses and validates one config file. */
  #parse(path: string): { raw: Record<string, unknown> } | { error: string } {
    let text: string;
    try {
      const read = readBounded(path, MAX_CONFIG_BYTES);
      if ('size' in read) return { error: `${path} is too large (over ${MAX_CONFIG_BYTES} bytes)` };
      text = read.text;
    } catch (e) {
      return { error: `cannot read ${path}: ${(e as Error).message}` };
    }
    if (text.trim() === '') return { error: `${path} is empty` };
    if (jsonDepth(text) > MAX_CONFIG_DEPTH) return { error: `${path} nests deeper than ${MAX_CONFIG_DEPTH} levels` };
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (e) {
      const where = jsonErrorLocation(text) ?? 'an unknown position';
      return { error: `${path}: invalid JSON at ${where} (${(e as Error).message})` };
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { error: `${path}: the top level must be a JSON object` };
    if (!this.#validate(raw)) return { error: `${path}: ${describeAjv(this.#validate.errors)}` };
    const rules = ((raw as { approvals?: { rules?: StandingRule[] } }).approvals?.rules ?? []).map((r) => r.id);
    const dup = rules.find((id, i) => rules.indexOf(id) !== i);
    if (dup) return { error: `${path}: /approvals/rules has the rule id "${dup}" twice` };
    const fleet = fleetProblem((raw as { fleet?: FleetSettings }).fleet);
    if (fleet) return { error: `${path}: ${fleet}` };
    const external = ((raw as { external_drivers?: ExternalDriverEntry[] }).external_drivers ?? []).map((d) => d.id);
    const reserved = [...RESERVED_DRIVER_IDS, 'fleet', ...this.#sections];
    const taken = external.findIndex((id, i) => reserved.includes(id) || external.indexOf(id) !== i);
    if (taken !== -1) {
      const id = external[taken]!;
      return { error: `${path}: /external_drivers/${taken}/id "${id}" is ${reserved.includes(id) ? "a built-in driver's id" : 'used twice'} — hint: give each external driver an id of its own` };
    }
    return { raw: raw as Record<string, unknown> };
  }
}
