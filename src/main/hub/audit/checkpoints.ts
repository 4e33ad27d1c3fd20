/**
 * Signed checkpoints of the audit's chain: `{count, head, at}` — how many records the chain held,
 * the hash of the newest (the genesis hash when empty), and when — signed with the data
 * directory's ed25519 key. Each is kept twice: in the database (`audit_checkpoints`) and appended
 * to a side file next to it (`audit.checkpoints.jsonl`), so a database deleted, truncated or
 * replaced by another is caught by what the side file still says (and by what other hubs of a
 * fleet hold: the same checkpoints, published through `onCheckpoint`).
 *
 * What is signed: the canonical JSON `{"at":…,"count":…,"head":"…"}` (sorted keys, no spaces).
 * A side-file line adds the audit's id (`audit`), the newest row's id (`id`, where an incremental
 * check starts) and the signature (`sig`, base64).
 *
 * The key: `audit.key` in the data directory, PKCS#8 PEM, mode 0600, made on first use. Its
 * public half is also kept in the database (`audit_meta.signing_key`) when first used, so a key
 * file deleted or replaced later does not erase what the signatures prove.
 */
import type { AuditCheckpoint } from '../types';
import { appendFileSync, closeSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { dirname, join } from 'node:path';
import type { Database as Db, Statement } from 'better-sqlite3';
import { Emitter } from '../../../shared/emitter';
import type { Disposer } from '../../../shared/emitter';
import { tightenFiles } from '../data-dir';
import { writeFileAtomic } from '../files';
import { cut } from '../bounds';
import { auditIdOf, genesisHash } from './chain';

/** A checkpoint of the chain, as hubs of a fleet exchange them. */
export type { AuditCheckpoint };

/** A checkpoint as this hub stores it: which audit, the newest row's id, the signature. */
export interface StoredCheckpoint extends AuditCheckpoint {
  audit: string;
  id: number;
  sig: string;
}

/** Where the side file of the audit at `auditPath` is (`audit.sqlite` → `audit.checkpoints.jsonl`). */
export function checkpointsPath(auditPath: string): string {
  return `${auditPath.replace(/\.sqlite$/, '')}.checkpoints.jsonl`;
}

/** Where the signing key of the audit at `auditPath` is: its data directory's `audit.key`. */
export function keyPath(auditPath: string): string {
  return join(dirname(auditPath), 'audit.key');
}

/** The bytes a checkpoint's signature covers. */
export function checkpointPayload(c: AuditCheckpoint): string {
  return `{"at":${JSON.stringify(c.at)},"count":${JSON.stringify(c.count)},"head":${JSON.stringify(c.head)}}`;
}

/** Whether `sig` (base64) is `key`'s signature of the checkpoint. */
export function signatureValid(key: KeyObject, c: AuditCheckpoint, sig: string): boolean {
  try {
    return verify(null, Buffer.from(checkpointPayload(c)), key, Buffer.from(sig, 'base64'));
  } catch {
    return false;
  }
}

/** The public key as kept in `audit_meta` (base64 of its SPKI DER). */
export function publicKeyText(key: KeyObject): string {
  return key.export({ type: 'spki', format: 'der' }).toString('base64');
}

export function publicKeyFrom(text: string): KeyObject | undefined {
  try {
    return createPublicKey({ key: Buffer.from(text, 'base64'), format: 'der', type: 'spki' });
  } catch {
    return undefined;
  }
}

/** The signing key at `path`, made (0600) when there is none; undefined when `create` is false and there is none. */
export function signingKey(path: string, create: boolean): KeyObject | undefined {
  let pem: string | undefined;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  if (pem === undefined) {
    if (!create) return undefined;
    const { privateKey } = generateKeyPairSync('ed25519');
    try {
      const fd = openSync(path, 'wx', 0o600);
      try {
        writeSync(fd, privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
      } finally {
        closeSync(fd);
      }
      return privateKey;
    } catch (e) {
      // Another process made it first: use that one.
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      pem = readFileSync(path, 'utf8');
    }
  }
  tightenFiles([path]);
  return createPrivateKey(pem);
}

/** The side file's checkpoints (damaged lines skipped), oldest first; none when it does not exist. */
export function readSideFile(path: string): StoredCheckpoint[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  const out: StoredCheckpoint[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const c = JSON.parse(line) as StoredCheckpoint;
      if (Number.isInteger(c.count) && typeof c.head === 'string' && Number.isFinite(c.at)) out.push(c);
    } catch {
      // A torn or damaged line: verify counts only what it can read.
    }
  }
  return out;
}

function auditOfLine(line: string): string {
  try {
    return String((JSON.parse(line) as { audit?: unknown }).audit);
  } catch {
    return '';
  }
}

/** The side file is rewritten with its newest lines when it grows past this. */
const SIDE_FILE_MAX_BYTES = 256 * 1024;
const SIDE_FILE_KEEP = 200;
/** Checkpoint rows kept in the database (the newest proves all before it). */
const TABLE_KEEP = 1000;

/**
 * Takes checkpoints of one database: when the chain's head moved since the newest one, and only
 * then. Failures (no key, a read-only directory) never reach a write: `error` says what failed.
 */
export class Checkpointer {
  readonly sidePath: string;
  readonly keyPath: string;
  #db: Db;
  #now: () => number;
  #key: KeyObject | undefined;
  #newest: Statement;
  #head: Statement;
  #countRange: Statement;
  #insert: Statement;
  #prune: Statement;
  #take: () => StoredCheckpoint | undefined;
  #listeners = new Emitter<AuditCheckpoint>();
  /** Why the last checkpoint could not be taken, or undefined. */
  error: string | undefined;

  constructor(db: Db, auditPath: string, now: () => number = Date.now) {
    this.#db = db;
    this.#now = now;
    this.sidePath = checkpointsPath(auditPath);
    this.keyPath = keyPath(auditPath);
    this.#newest = db.prepare('SELECT count, head, last_id FROM audit_checkpoints ORDER BY seq DESC LIMIT 1');
    this.#head = db.prepare('SELECT id, hash FROM entries ORDER BY id DESC LIMIT 1');
    this.#countRange = db.prepare('SELECT COUNT(*) AS n FROM entries WHERE id > ? AND id <= ?');
    this.#insert = db.prepare('INSERT INTO audit_checkpoints (count, head, at, last_id, sig) VALUES (?, ?, ?, ?, ?)');
    this.#prune = db.prepare(`DELETE FROM audit_checkpoints WHERE seq <= (SELECT MAX(seq) FROM audit_checkpoints) - ${TABLE_KEEP}`);
    this.#take = db.transaction((): StoredCheckpoint | undefined => {
      const audit = auditIdOf(db) ?? '';
      const head = this.#head.get() as { id: number; hash: string | null } | undefined;
      // Unlinked rows (the benchmark's baseline) have no chain to vouch for.
      if (head && head.hash === null) return undefined;
      const headId = head?.id ?? 0;
      const headHash = head?.hash ?? genesisHash(audit);
      const last = this.#newest.get() as { count: number; head: string; last_id: number } | undefined;
      if (last && last.last_id === headId && last.head === headHash) return undefined;
      const since = last && last.last_id <= headId ? last.last_id : 0;
      const count = (since ? last!.count : 0) + (this.#countRange.get(since, headId) as { n: number }).n;
      const c: AuditCheckpoint = { count, head: headHash, at: this.#now() };
      const key = this.#signingKey();
      const sig = sign(null, Buffer.from(checkpointPayload(c)), key).toString('base64');
      this.#insert.run(c.count, c.head, c.at, headId, sig);
      this.#prune.run();
      return { ...c, audit, id: headId, sig };
    }).immediate;
  }

  #signingKey(): KeyObject {
    if (!this.#key) {
      this.#key = signingKey(this.keyPath, true)!;
      this.#db.prepare("INSERT OR IGNORE INTO audit_meta (key, value) VALUES ('signing_key', ?)").run(publicKeyText(createPublicKey(this.#key)));
    }
    return this.#key;
  }

  /** Whether the chain's head is not the newest checkpoint's (or there is none yet). */
  #moved(): boolean {
    const head = this.#head.get() as { id: number; hash: string | null } | undefined;
    const last = this.#newest.get() as { head: string; last_id: number } | undefined;
    return !last || last.last_id !== (head?.id ?? 0) || (head !== undefined && last.head !== head.hash);
  }

  /** Hears every checkpoint this process takes. */
  onCheckpoint(listener: (checkpoint: AuditCheckpoint) => void): Disposer {
    return this.#listeners.on(listener);
  }

  /** Takes a checkpoint if the chain moved since the newest; returns it. */
  take(): AuditCheckpoint | undefined {
    let stored: StoredCheckpoint | undefined;
    try {
      // Read first, without the write lock: an idle audit is looked at, not locked, every tick.
      if (!this.#moved()) return undefined;
      stored = this.#take();
      if (!stored) return undefined;
      this.#append(stored);
      this.error = undefined;
    } catch (e) {
      // Another process holds the lock: the next tick signs it (the store says when a lock lasts too long).
      const code = (e as { code?: unknown })?.code;
      const busy = typeof code === 'string' && /^SQLITE_(BUSY|LOCKED)/.test(code);
      if (!busy) this.error = `the audit's checkpoint could not be written: ${cut(String((e as Error)?.message ?? e), 300)}`;
      if (!stored) return undefined;
    }
    const c: AuditCheckpoint = { count: stored.count, head: stored.head, at: stored.at };
    this.#listeners.emit(c);
    return c;
  }

  #append(c: StoredCheckpoint): void {
    const line = `${JSON.stringify({ audit: c.audit, count: c.count, head: c.head, at: c.at, id: c.id, sig: c.sig })}\n`;
    appendFileSync(this.sidePath, line, { mode: 0o600 });
    let size = 0;
    try {
      size = statSync(this.sidePath).size;
    } catch {
      return;
    }
    if (size > SIDE_FILE_MAX_BYTES) {
      // The newest checkpoint vouches for every record before it: older lines add nothing, except
      // the newest of another audit (a database that was replaced), which stays as evidence.
      const lines = readFileSync(this.sidePath, 'utf8').split('\n').filter(Boolean);
      const keep = new Set(lines.slice(-SIDE_FILE_KEEP));
      const audits = new Map<string, string>();
      for (const line of lines) audits.set(auditOfLine(line), line);
      for (const line of audits.values()) keep.add(line);
      writeFileAtomic(this.sidePath, `${lines.filter((l) => keep.has(l)).join('\n')}\n`);
    }
  }
}
