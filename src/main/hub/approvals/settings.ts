/**
 * Operator settings that live in config.json (the approval timeout), and which standing rules the
 * operator confirmed. Each change is written atomically and recorded (fsynced) as the operator's decision.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { canonicalJson } from '../../../shared/arg-constraints';
import type { ConfigStore } from '../config';
import { HubError } from '../errors';
import { readSmallFile, writeFileAtomic } from '../files';
import type { AuditEntry } from '../types';

/** Records an entry; `durable` commits it fsynced. */
export type Recorder = (entry: Omit<AuditEntry, 'id'>, durable?: boolean) => void;

/** Edits config.json; a broken file (or a failed write) is an Unavailable the operator can act on. */
export function editConfig(config: ConfigStore, edit: (raw: Record<string, unknown>) => void, what = `save ${config.path}`): void {
  try {
    config.update(edit);
  } catch (e) {
    throw new HubError('core', 'Unavailable', `cannot ${what}: ${(e as Error).message}`, {
      hint: (e instanceof HubError && e.hint) || 'check the file and its permissions',
    });
  }
}

/** Writes `approvals.timeout_ms` (1 s to 24 h). */
export function setApprovalTimeout(config: ConfigStore, record: Recorder, now: number, ms: number, by: string): void {
  if (!Number.isInteger(ms) || ms < 1000 || ms > 86_400_000) {
    throw new HubError('core', 'Invalid', `approval timeout ${ms} ms is out of range`, { hint: 'use 1000 to 86400000 ms' });
  }
  editConfig(config, (raw) => {
    raw.approvals = { ...((raw.approvals ?? {}) as object), timeout_ms: ms };
  });
  record({ at: now, type: 'decision', kind: 'decision', authorized: 'operator', by, reason: `approval timeout set to ${ms} ms`, granted: true }, true);
}

/**
 * The rule as its fields say, keys sorted at every depth (its arg constraints too): what a
 * confirmation stands for.
 */
export function ruleDigest(rule: object): string {
  return createHash('sha256').update(canonicalJson(rule)).digest('hex');
}

/** Confirmations are 64 hex digits each; a file past this is not ours. */
const MAX_CONFIRMED_BYTES = 4 * 1024 * 1024;

/**
 * Which standing rules the operator made or confirmed in the panel, kept by the hub as digests in
 * a 0600 file beside config.json. A rule in config.json is in force only while its exact content
 * is here: one written by hand or by another process (or edited so) stays proposed until the
 * operator confirms it, so whatever can write config.json cannot approve anything by itself.
 * An unreadable file confirms nothing (fail closed).
 */
export class ConfirmedRules {
  readonly path: string;
  #digests = new Set<string>();
  #error: string | undefined;

  constructor(dataDir: string) {
    this.path = join(dataDir, 'confirmed-rules.json');
    try {
      const parsed = JSON.parse(readSmallFile(this.path, MAX_CONFIRMED_BYTES)) as { digests?: unknown };
      if (!Array.isArray(parsed.digests)) throw new Error('no digests list');
      for (const d of parsed.digests) if (typeof d === 'string' && /^[0-9a-f]{64}$/.test(d)) this.#digests.add(d);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
        this.#error = `${this.path} cannot be read (${(e as Error).message}); every standing rule is proposed, not in force`;
    }
  }

  has(rule: object): boolean {
    return this.#digests.has(ruleDigest(rule));
  }

  /** Why the file could not be read, if it could not. */
  error(): string | undefined {
    return this.#error;
  }

  /**
   * Confirms `add` and withdraws `remove` in one durable write; nothing changes if it fails. With
   * `present` (the rules now in config.json), confirmations of rules no longer there are dropped,
   * so a rule deleted and later written back by hand is proposed, not silently in force again.
   */
  change(add: object[], remove: object[] = [], present?: object[]): void {
    const keep = present && new Set(present.map(ruleDigest));
    const next = new Set([...this.#digests].filter((d) => !keep || keep.has(d)));
    for (const r of remove) next.delete(ruleDigest(r));
    for (const r of add) next.add(ruleDigest(r));
    try {
      writeFileAtomic(this.path, `${JSON.stringify({ digests: [...next] })}\n`, 0o600);
    } catch (e) {
      throw new HubError('core', 'Unavailable', `cannot record the confirmed rules in ${this.path}: ${(e as Error).message}`, {
        hint: 'check the data dir and its permissions',
      });
    }
    this.#digests = next;
    this.#error = undefined;
  }
}
