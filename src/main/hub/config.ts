/**
 * `<data dir>/config.json`: loaded and validated with ajv, watched and reloaded on change. A broken
 * file never replaces the last good config; the error (with its location) is kept for `doctor`.
 * Writes (new "always" rules, revokes, the timeout) are atomic (temp file + rename) and preserve
 * every other section. Each good load is also copied to `config.last-good.json`, which a later
 * start uses when the file is broken by then (so "last good" holds across restarts too).
 */
import { existsSync, readFileSync, renameSync, rmSync, watch, writeFileSync } from 'node:fs';
import type { FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import type { JsonSchema } from '../kernel/types';
import { jsonErrorLocation } from './json-locate';
import type { Disposer, StandingRule } from './types';

/** Default approval timeout (SPEC §4). */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 120_000;
/** Default deadline for one driver call. */
export const DEFAULT_DRIVER_TIMEOUT_MS = 90_000;

/** The config file as the hub reads it; driver sections are opaque here and validated by their schema. */
export interface UplinkConfig {
  approvals: { timeout_ms: number; rules: StandingRule[] };
  /** `drivers`: which drivers run (all when absent); read when the hub starts. */
  hub: { driver_timeout_ms: number; drivers?: string[] };
  [section: string]: unknown;
}

const RULE_SCHEMA = {
  type: 'object',
  required: ['id', 'channel', 'op'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 128 },
    channel: { type: 'string', minLength: 1 },
    op: { type: 'string', minLength: 1 },
    agent: { type: 'string', minLength: 1 },
    created_at: { type: 'string' },
    created_by: { type: 'string' },
    note: { type: 'string' },
  },
};

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
  #current: UplinkConfig = normalize({});
  #error: string | undefined;
  #listeners = new Set<(config: UplinkConfig) => void>();
  #errorListeners = new Set<(error: string) => void>();
  #watcher: FSWatcher | undefined;
  #debounce: ReturnType<typeof setTimeout> | undefined;
  /** What is in use while the file is broken (said by `doctor` and the audit). */
  #fallback = 'the defaults are in use: no good config was loaded before';

  constructor(path: string, sectionSchemas: Record<string, JsonSchema> = {}) {
    this.path = path;
    this.lastGoodPath = path.replace(/(\.json)?$/, '.last-good.json');
    const ajv = new Ajv2020({ allErrors: false, strict: false });
    this.#validate = ajv.compile(rootSchema(sectionSchemas));
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
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Re-reads the file; keeps the last good config when it is broken. Returns the error, if any. */
  reload(): string | undefined {
    const parsed = this.#readRaw();
    if ('error' in parsed) {
      const fresh = parsed.error !== this.#error;
      this.#error = parsed.error;
      if (fresh) for (const l of this.#errorListeners) l(parsed.error);
      return parsed.error;
    }
    this.#error = undefined;
    this.#current = normalize(parsed.raw);
    this.#fallback = 'the last good config stays in use';
    this.#saveLastGood(parsed.raw);
    for (const l of this.#listeners) l(this.#current);
    return undefined;
  }

  /** Keeps a copy of a config that loaded (0600, temp + rename); best effort. */
  #saveLastGood(raw: Record<string, unknown>): void {
    const text = `${JSON.stringify(raw, null, 2)}\n`;
    try {
      // No file (or an empty one) means the defaults: no copy, so a stale one cannot come back.
      if (Object.keys(raw).length === 0) return void rmSync(this.lastGoodPath, { force: true });
      if (existsSync(this.lastGoodPath) && readFileSync(this.lastGoodPath, 'utf8') === text) return;
      const tmp = `${this.lastGoodPath}.${process.pid}.tmp`;
      writeFileSync(tmp, text, { mode: 0o600 });
      renameSync(tmp, this.lastGoodPath);
    } catch {
      // A read-only data dir: the copy is a convenience; the live config is unaffected.
    }
  }

  /** Loads the copy saved by an earlier run, if it is still valid. */
  #loadLastGood(): void {
    try {
      const raw: unknown = JSON.parse(readFileSync(this.lastGoodPath, 'utf8'));
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || !this.#validate(raw)) return;
      this.#current = normalize(raw as Record<string, unknown>);
      this.#fallback = `the last good config (saved in ${this.lastGoodPath}) stays in use`;
    } catch {
      // No copy (first run) or unreadable: the defaults stay, and `fallback()` says so.
    }
  }

  /** Calls `listener` when a (re)load fails with a new error. */
  onError(listener: (error: string) => void): Disposer {
    this.#errorListeners.add(listener);
    return () => this.#errorListeners.delete(listener);
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
      throw new Error(`${this.path} is broken (${parsed.error}) — hint: fix the file first; ${this.#fallback}`);
    }
    const raw = parsed.raw;
    edit(raw);
    if (!this.#validate(raw)) throw new Error(`config edit would be invalid: ${describeAjv(this.#validate.errors)}`);
    const tmp = `${this.path}.${process.pid}.${Date.now()}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(raw, null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, this.path);
    this.#error = undefined;
    this.#current = normalize(raw);
    this.#fallback = 'the last good config stays in use';
    this.#saveLastGood(raw);
    for (const l of this.#listeners) l(this.#current);
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

  #readRaw(): { raw: Record<string, unknown> } | { error: string } {
    if (!existsSync(this.path)) return { raw: {} };
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (e) {
      return { error: `cannot read ${this.path}: ${(e as Error).message}` };
    }
    if (text.trim() === '') return { raw: {} };
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (e) {
      const where = jsonErrorLocation(text) ?? 'an unknown position';
      return { error: `${this.path}: invalid JSON at ${where} (${(e as Error).message})` };
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { error: `${this.path}: the top level must be a JSON object` };
    if (!this.#validate(raw)) return { error: `${this.path}: ${describeAjv(this.#validate.errors)}` };
    const rules = ((raw as { approvals?: { rules?: StandingRule[] } }).approvals?.rules ?? []).map((r) => r.id);
    const dup = rules.find((id, i) => rules.indexOf(id) !== i);
    if (dup) return { error: `${this.path}: /approvals/rules has the rule id "${dup}" twice` };
    return { raw: raw as Record<string, unknown> };
  }
}
