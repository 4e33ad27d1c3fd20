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
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, watch } from 'node:fs';
import type { FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { describeSchemaError, schemaValidator } from '../../kernel';
import type { JsonSchema } from '../../kernel';
import { Emitter } from '../../../shared/emitter';
import type { ArgConstraints } from '../../../shared/arg-constraints';
import { HubError } from '../errors';
import { readBoundedFile, readSmallFile, writeFileAtomic } from '../files';
import { jsonErrorLocation } from './json-locate';
import type { Disposer } from '../types';

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
  if (!file.regular) throw new Error(`it is ${file.type}, not a regular file`);
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

const NAME_PATTERN = '^[a-z][a-z0-9-]*$';
const PATH = Type.String({ minLength: 1, maxLength: 4096 });

/**
 * A standing rule in `approvals.rules`: auto-approves matching requests. Rules the panel writes
 * carry an `id`; a hand-written rule may leave it out and gets one derived from its content
 * (`ruleId`), stable for as long as the rule is unchanged.
 */
export const StandingRuleSchema = Type.Object(
  {
    id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    /**
     * Glob (`*`, `?`) on the channel's stable names, `<driver>:<label>` for each of its labels (a tmux
     * pane's `@name`, a desktop window's title or class), e.g. `tmux:codex`. Never matched against
     * reusable ids (`tmux:%3`, `desktop:0x3a00007`): those can name another target later.
     */
    channel: Type.String({ minLength: 1 }),
    /** Glob on the op name (`send` for sends), or a list of them. */
    op: Type.Union([Type.String({ minLength: 1 }), Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })]),
    /** Glob on the authenticated agent id (never the declared client name); omitted = any agent. */
    agent: Type.Optional(Type.String({ minLength: 1 })),
    /**
     * Covers only calls whose args meet these, e.g. `{"keys": ["Enter"]}`, `{"text": {"glob": "git
     * status*"}}`: an exact JSON value or `{glob}`; the hub checks names against the ops when the
     * panel saves one.
     */
    args: Type.Optional(Type.Unsafe<ArgConstraints>({ type: 'object', maxProperties: 16, propertyNames: { pattern: '^[A-Za-z0-9_.-]{1,64}$' } })),
    created_at: Type.Optional(Type.String()),
    created_by: Type.Optional(Type.String()),
    note: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** Ids an external driver may not take: the built-in drivers' and `core` (the hub's own errors). */
export const RESERVED_DRIVER_IDS = ['core', 'tmux', 'desktop'];

/** One out-of-process driver the operator configured (docs/driver-protocol.md, Admission). */
export const ExternalDriverEntrySchema = Type.Object(
  {
    id: Type.String({ pattern: NAME_PATTERN, maxLength: 64 }),
    command: Type.Array(Type.String({ minLength: 1, maxLength: 4096 }), { minItems: 1, maxItems: 256 }),
    integrity: Type.Optional(Type.Object({ file: PATH, sha256: Type.String({ pattern: '^[0-9a-fA-F]{64}$' }) }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);
export type ExternalDriverEntry = Static<typeof ExternalDriverEntrySchema>;

/** How this hub joins a fleet of hubs on NATS (docs/fleet.md); read when the hub starts. */
export const FleetSettingsSchema = Type.Object(
  {
    /** `nats://host:port` or `tls://host:port` (TLS required then). */
    url: Type.String({ pattern: '^(nats|tls)://[^\\s/]+$', maxLength: 512 }),
    /** This hub's name in the fleet: its channels are `<name>/<channel>` to the other hubs. */
    name: Type.String({ pattern: NAME_PATTERN, maxLength: 64 }),
    /** A file holding the fleet's NATS token (0600); relative paths are under the data dir. Or `creds_file`. */
    token_file: Type.Optional(PATH),
    /** A NATS credentials file (user JWT + NKey seed, 0600), as `nsc` makes it. Or `token_file`. */
    creds_file: Type.Optional(PATH),
    /** The CA bundle (PEM) a `tls://` server's certificate is checked against; the system's CAs without it. */
    ca_file: Type.Optional(PATH),
    /** This hub's own NKey seed (`SU…`, 0600), from `uplink fleet init`: it joins with it and signs every message. With `roster_file`. */
    seed_file: Type.Optional(PATH),
    /** The fleet's roster (hub name → public key), from `uplink fleet init`: only these keys are believed. With `seed_file`. */
    roster_file: Type.Optional(PATH),
  },
  { additionalProperties: false },
);
export type FleetSettings = Static<typeof FleetSettingsSchema>;

const ApprovalsSchema = Type.Object(
  {
    timeout_ms: Type.Optional(Type.Integer({ minimum: 1000, maximum: 86_400_000 })),
    /**
     * A mutating call while no panel is connected: `wait` (default) is a prompt like any, pending
     * until a panel decides it or `timeout_ms` passes; `deny` refuses it at once, and denies the
     * prompts still waiting when the last panel has been gone for a grace period.
     */
    when_no_panel: Type.Optional(Type.Union([Type.Literal('wait'), Type.Literal('deny')])),
    rules: Type.Optional(Type.Array(StandingRuleSchema)),
  },
  { additionalProperties: false },
);

/** What a mutating call meets while no panel is connected (`approvals.when_no_panel`). */
export type WhenNoPanel = 'wait' | 'deny';

const HubSettingsSchema = Type.Object(
  {
    driver_timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 3_600_000 })),
    /** Which drivers run (all when absent); read when the hub starts. */
    drivers: Type.Optional(Type.Array(Type.String({ pattern: NAME_PATTERN }), { uniqueItems: true })),
  },
  { additionalProperties: false },
);

/** config.json's own sections; each driver's section is added by its schema (`sectionSchemas`). */
const HUB_SECTIONS = {
  $schema: Type.Optional(Type.String()),
  approvals: Type.Optional(ApprovalsSchema),
  hub: Type.Optional(HubSettingsSchema),
  external_drivers: Type.Optional(Type.Array(ExternalDriverEntrySchema, { maxItems: 64 })),
  fleet: Type.Optional(FleetSettingsSchema),
};

/** config.json as the file holds it: every section optional, driver sections opaque here. */
function fileSchema(sectionSchemas: Record<string, JsonSchema>) {
  const sections = Object.fromEntries(Object.entries(sectionSchemas).map(([name, schema]) => [name, Type.Optional(Type.Unsafe<unknown>(schema as object))]));
  return Type.Object({ ...HUB_SECTIONS, ...sections });
}

type ConfigFile = Static<ReturnType<typeof fileSchema>>;

/** The config as the hub reads it: the file with defaults filled in; driver sections validated by their schema. */
export type UplinkConfig = Omit<ConfigFile, 'approvals' | 'hub'> & {
  /** Every rule with its id (derived for a hand-written rule without one). */
  approvals: { timeout_ms: number; when_no_panel: WhenNoPanel; rules: Array<Static<typeof StandingRuleSchema> & { id: string }> };
  hub: Static<typeof HubSettingsSchema> & { driver_timeout_ms: number };
  [section: string]: unknown;
};

/** Names that would make a hub's subjects (`uplink.<hub>.call`) collide with the fleet's shared ones. */
const RESERVED_FLEET_NAMES = ['history', 'presence', 'prompts', 'checkpoint'];

/** What the schema cannot say in words a person can act on: one way to authenticate, a usable name, a CA only for TLS. */
function fleetProblem(fleet: FleetSettings | undefined): string | undefined {
  if (!fleet) return undefined;
  const ways = [fleet.token_file && 'token_file', fleet.creds_file && 'creds_file', fleet.seed_file && 'seed_file'].filter(Boolean);
  if (ways.length > 1) return `/fleet has ${ways.join(' and ')} — hint: keep the one the NATS server expects and remove the other`;
  if (!ways.length)
    return '/fleet needs seed_file and roster_file (from `uplink fleet init`), or token_file, or creds_file — hint: run `uplink fleet init --hubs a,b,c --out DIR` and copy the fleet section it prints';
  if (!fleet.seed_file !== !fleet.roster_file)
    return `/fleet has ${fleet.seed_file ? 'seed_file without roster_file' : 'roster_file without seed_file'} — hint: a hub signs with its seed and believes the roster's keys: name both files \`uplink fleet init\` wrote`;
  if (RESERVED_FLEET_NAMES.includes(fleet.name))
    return `/fleet/name ${fleet.name} is a word the fleet's own subjects use — hint: choose another name, e.g. ${fleet.name}-1`;
  if (fleet.ca_file && !fleet.url.startsWith('tls://'))
    return '/fleet/ca_file is only used with a tls:// url — hint: write the url as tls://host:port, or remove ca_file';
  return undefined;
}

/** A rule as written in config.json: `id` may be left out. */
type RuleInFile = Static<typeof StandingRuleSchema>;

/** A rule's id: its own, else `rule-` and 8 hex digits of the hash of its content (keys sorted). */
export function ruleId(rule: RuleInFile): string {
  if (rule.id !== undefined) return rule.id;
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
          )
        : v;
  return `rule-${createHash('sha256')
    .update(JSON.stringify(sorted(rule)))
    .digest('hex')
    .slice(0, 8)}`;
}

/** Normalizes a validated raw object into the hub's view (defaults filled in). */
function normalize(raw: ConfigFile): UplinkConfig {
  const approvals = raw.approvals ?? {};
  const hub = raw.hub ?? {};
  return {
    ...raw,
    approvals: {
      timeout_ms: approvals.timeout_ms ?? DEFAULT_APPROVAL_TIMEOUT_MS,
      when_no_panel: approvals.when_no_panel ?? 'wait',
      rules: (approvals.rules ?? []).map((r) => ({ ...r, id: ruleId(r) })),
    },
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
    this.#validate = schemaValidator(fileSchema(sectionSchemas));
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
  #saveLastGood(raw: ConfigFile): void {
    const text = `${JSON.stringify(raw, null, 2)}\n`;
    try {
      if (existsSync(this.lastGoodPath) && readSmallFile(this.lastGoodPath, MAX_CONFIG_BYTES) === text) return;
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
      throw new HubError('core', 'Unavailable', `${this.path} is broken (${parsed.error})`, {
        hint: `fix the file first (write {} to start from the defaults); ${this.#fallback}`,
      });
    }
    const raw: unknown = parsed.raw;
    edit(raw as Record<string, unknown>);
    if (!this.#valid(raw)) throw new HubError('core', 'Invalid', `config edit would be invalid: ${describeSchemaError(this.#validate.errors)}`);
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

  #readRaw(): { raw: ConfigFile; file: boolean } | { error: string } {
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
  #parse(path: string): { raw: ConfigFile } | { error: string } {
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
    if (!this.#valid(raw)) return { error: `${path}: ${describeSchemaError(this.#validate.errors)}` };
    const rules = (raw.approvals?.rules ?? []).map(ruleId);
    const dup = rules.findIndex((id, i) => rules.indexOf(id) !== i);
    if (dup !== -1) {
      const derived = raw.approvals!.rules![dup]!.id === undefined;
      return {
        error: derived
          ? `${path}: /approvals/rules/${dup} repeats an earlier rule word for word — hint: delete one of them`
          : `${path}: /approvals/rules has the rule id "${rules[dup]}" twice — hint: give each rule an id of its own, or leave id out to have one derived`,
      };
    }
    const fleet = fleetProblem(raw.fleet);
    if (fleet) return { error: `${path}: ${fleet}` };
    const external = (raw.external_drivers ?? []).map((d) => d.id);
    const reserved = [...RESERVED_DRIVER_IDS, 'fleet', ...this.#sections];
    const taken = external.findIndex((id, i) => reserved.includes(id) || external.indexOf(id) !== i);
    if (taken !== -1) {
      const id = external[taken]!;
      return {
        error: `${path}: /external_drivers/${taken}/id "${id}" is ${reserved.includes(id) ? "a built-in driver's id" : 'used twice'} — hint: give each external driver an id of its own`,
      };
    }
    return { raw };
  }

  /** Whether `raw` is a config file by the schema (its first error is then in `#validate.errors`). */
  #valid(raw: unknown): raw is ConfigFile {
    return this.#validate(raw) === true;
  }
}
