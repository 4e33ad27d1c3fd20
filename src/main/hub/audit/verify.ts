/**
 * Checking the audit's chain (chain.ts) and its signed checkpoints (checkpoints.ts).
 *
 * `verifyAudit` is `uplink audit verify`: it opens the file read-only (beside a running hub, or
 * of a stopped one), recomputes every link, and checks every checkpoint it can find — in the
 * database, in the side file, and in witness files other hubs of a fleet wrote — against the
 * chain. Each finding names where the chain breaks and how:
 *
 * - `deleted`: a record's link names no record there is, and ids are missing before it;
 * - `altered`: a record's content no longer hashes to its stored hash;
 * - `reordered`: a record's link names a record that is stored elsewhere in the order;
 * - `truncated`: the chain is shorter than a checkpoint says it was (its tail is gone);
 * - `rewritten`: the chain is consistent, but its hash at a checkpoint's count is not the
 *   checkpoint's (someone recomputed it — only possible with the key, or without checkpoints);
 * - `replaced`: checkpoints of another audit id (the database was deleted and recreated);
 * - `signature`, `key`: a checkpoint not signed by the audit's key, or no key to check with;
 * - `unchained`: a row without a link; `damaged`: SQLite finds the file damaged.
 *
 * `chainProblem` is the cheap check `doctor` runs on the live store: the newest checkpoint's
 * signature, that its record is still there with its hash, and the links after it.
 */
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { Database as Db } from 'better-sqlite3';
import { createPublicKey } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { readSmallFile } from '../files';
import { cut } from '../bounds';
import { auditIdOf, canonicalCells, genesisHash, linkHash } from './chain';
import { checkpointsPath, keyPath, publicKeyFrom, publicKeyText, readSideFile, signatureValid, signingKey } from './checkpoints';
import type { AuditCheckpoint } from './checkpoints';
import { AUDIT_SCHEMA_VERSION } from './migrations';

export type FindingKind = 'deleted' | 'altered' | 'reordered' | 'truncated' | 'rewritten' | 'replaced' | 'signature' | 'key' | 'unchained' | 'damaged';

/** One thing wrong, in one line; `id` is the record where the chain breaks, when there is one. */
export interface AuditFinding {
  kind: FindingKind;
  message: string;
  id?: number;
  /** The record's position in the chain (1 = the first). */
  position?: number;
  /** Where a checkpoint came from: `database`, `side file` or the witness file's path. */
  source?: string;
}

/** What `uplink audit verify --json` prints. */
export interface AuditVerifyReport {
  /** True only when no finding was made. */
  ok: boolean;
  path: string;
  audit_id: string | null;
  /** Records in the chain. */
  records: number;
  /** The hash of the newest record (the genesis hash when there is none). */
  head: string;
  /** Checkpoints checked against the chain, by where they came from. */
  checkpoints: { database: number; side_file: number; witness: number };
  findings: AuditFinding[];
}

/** A checkpoint as verify meets it. */
interface Seen extends AuditCheckpoint {
  source: string;
  audit?: string;
  sig?: string;
}

/** Why verify could not start (exit 2). */
export class VerifyUnavailable extends Error {
  readonly hint: string;
  constructor(message: string, hint: string) {
    super(message);
    this.hint = hint;
  }
}

/** Findings past this many are counted, not listed. */
const MAX_FINDINGS = 50;

/** Largest witness file read. */
const MAX_WITNESS_BYTES = 16 * 1024 * 1024;

interface WalkStart {
  /** The hash the first row walked must link to. */
  prev: string;
  /** The position of the row before the first walked. */
  position: number;
  /** Rows with ids above this are walked. */
  afterId: number;
  /** The id of the row before the first walked (0: none). */
  prevId: number;
}

interface Walked {
  records: number;
  head: string;
  /** The stored hash at each wanted position. */
  at: Map<number, string>;
  findings: AuditFinding[];
}

/** Walks the chain from `start`, checking each row's link and hash; `wanted` positions are noted. */
function walk(db: Db, start: WalkStart, wanted: ReadonlySet<number>, limit = Infinity): Walked {
  const findings: Array<AuditFinding & { until?: number; first?: string }> = [];
  const at = new Map<number, string>();
  const byHash = db.prepare('SELECT id FROM entries WHERE hash = ? LIMIT 1');
  let prev: string | null = start.prev;
  let prevId = start.prevId;
  let position = start.position;
  let seen = 0;
  const select = db.prepare('SELECT * FROM entries WHERE id > ? ORDER BY id').raw(true);
  // Rows as arrays under one constant list of names: the canonical form's order is worked out once.
  const names = select.columns().map((c) => c.name);
  const [iId, iPrev, iHash] = ['id', 'prev_hash', 'hash'].map((n) => names.indexOf(n)) as [number, number, number];
  for (const cells of select.iterate(start.afterId) as IterableIterator<unknown[]>) {
    if (++seen > limit) break;
    position++;
    const id = Number(cells[iId]);
    const where = { id, position };
    const stored = typeof cells[iHash] === 'string' ? (cells[iHash] as string) : null;
    const link = typeof cells[iPrev] === 'string' ? (cells[iPrev] as string) : null;
    if (stored === null || link === null) {
      findings.push({ kind: 'unchained', ...where, message: `record ${id} has no chain link (it was written without one, or its link was erased)` });
    } else {
      let reordered = false;
      if (prev !== null && link !== prev) {
        const other = byHash.get(link) as { id: number } | undefined;
        if (other && other.id !== prevId) {
          reordered = true;
          const last = findings[findings.length - 1];
          // A run of rows out of place is one finding: the records from its first to here.
          if (last?.kind === 'reordered' && last.until === prevId) {
            last.until = id;
            last.message = `records ${last.id}–${id} are out of order: ${last.first}`;
          } else {
            const first = `record ${id} was recorded after record ${other.id}, but is stored after ${prevId ? `record ${prevId}` : 'the start'}`;
            findings.push({ kind: 'reordered', ...where, message: `record ${id} is out of order: ${first}`, until: id, first });
          }
        } else if (id > prevId + 1) {
          const missing = id - prevId - 1;
          findings.push({
            kind: 'deleted',
            ...where,
            message: `${missing === 1 ? `record ${prevId + 1} was` : `records ${prevId + 1}–${id - 1} were`} deleted: record ${id} does not link to ${prevId ? `record ${prevId}` : 'the start of the chain'}`,
          });
        } else {
          findings.push({
            kind: 'deleted',
            ...where,
            message: `record ${id} does not link to ${prevId ? `record ${prevId}` : 'the start of the chain'}: records between them were deleted (and the ids renumbered), or that record's link was changed`,
          });
        }
      }
      if (!reordered && linkHash(link, canonicalCells(names, cells)) !== stored)
        findings.push({ kind: 'altered', ...where, message: `record ${id} was altered after it was recorded: its content no longer matches its hash` });
    }
    if (wanted.has(position)) at.set(position, stored ?? '');
    prev = stored;
    prevId = id;
  }
  return { records: position, head: prev ?? '', at, findings: findings.map(({ until: _until, first: _first, ...f }) => f) };
}

/** The public key checkpoints are checked with, and a finding when the key file and the database disagree. */
function checkKey(db: Db, auditPath: string): { key?: KeyObject; finding?: AuditFinding } {
  const kept = (db.prepare("SELECT value FROM audit_meta WHERE key = 'signing_key'").get() as { value: string } | undefined)?.value;
  let fileKey: KeyObject | undefined;
  try {
    const priv = signingKey(keyPath(auditPath), false);
    if (priv) fileKey = createPublicKey(priv);
  } catch {
    // Unreadable: the key the database kept still checks.
  }
  const key = kept ? publicKeyFrom(kept) : fileKey;
  if (kept && fileKey && publicKeyText(fileKey) !== kept)
    return {
      ...(key ? { key } : {}),
      finding: {
        kind: 'key',
        message: `the signing key file ${keyPath(auditPath)} is not the key this audit's checkpoints were first signed with: it was replaced`,
      },
    };
  return key ? { key } : {};
}

/** The lines of a witness file: `{count, head, at}` per line. */
function readWitness(path: string): Seen[] {
  let text: string;
  try {
    text = readSmallFile(path, MAX_WITNESS_BYTES);
  } catch (e) {
    throw new VerifyUnavailable(
      `cannot read the witness file ${path}: ${(e as Error).message}`,
      'pass a JSON Lines file of {count, head, at} checkpoints, e.g. <dataDir>/fleet/witness/<hub>.jsonl',
    );
  }
  const out: Seen[] = [];
  let line = 0;
  for (const raw of text.split('\n')) {
    line++;
    if (!raw.trim()) continue;
    let c: Partial<Seen>;
    try {
      c = JSON.parse(raw) as Partial<Seen>;
    } catch {
      throw new VerifyUnavailable(`${path}:${line} is not JSON`, 'a witness file holds one {count, head, at} object per line');
    }
    if (!Number.isInteger(c.count) || c.count! < 0 || typeof c.head !== 'string' || typeof c.at !== 'number')
      throw new VerifyUnavailable(`${path}:${line} is not a checkpoint {count, head, at}`, 'a witness file holds one {count, head, at} object per line');
    out.push({ count: c.count!, head: c.head, at: c.at, source: path, ...(typeof c.audit === 'string' ? { audit: c.audit } : {}) });
  }
  return out;
}

const when = (at: number): string => (Number.isFinite(at) ? new Date(at).toISOString() : String(at));

/** Compares checkpoints with the walked chain. */
function checkCheckpoints(all: readonly Seen[], walked: Walked, genesis: string, auditId: string, key: KeyObject | undefined): AuditFinding[] {
  const findings: AuditFinding[] = [];
  const others = new Map<string, Seen>();
  const mine: Seen[] = [];
  for (const c of all) {
    if (c.audit !== undefined && c.audit !== auditId) {
      const had = others.get(c.audit);
      if (!had || c.count > had.count) others.set(c.audit, c);
    } else mine.push(c);
  }
  for (const [id, c] of others)
    findings.push({
      kind: 'replaced',
      source: c.source,
      message: `the ${c.source} holds checkpoints of another audit (${id}, ${c.count} records at ${when(c.at)}): the database was deleted or replaced since`,
    });
  const signed = mine.filter((c) => c.sig !== undefined);
  if (signed.length && !key)
    findings.push({ kind: 'key', message: 'no key to check the checkpoints\u2019 signatures: the key file is gone and the database kept none' });
  for (const c of signed)
    if (key && !signatureValid(key, c, c.sig!))
      findings.push({
        kind: 'signature',
        source: c.source,
        message: `a checkpoint in the ${c.source} (${c.count} records at ${when(c.at)}) is not signed by this audit's key: it was altered or forged`,
      });
  const longest = mine.reduce<Seen | undefined>((a, c) => (!a || c.count > a.count ? c : a), undefined);
  if (longest && longest.count > walked.records)
    findings.push({
      kind: 'truncated',
      source: longest.source,
      position: walked.records + 1,
      message: `the chain holds ${records(walked.records)}, but a checkpoint (${longest.source}, ${when(longest.at)}) says it held ${longest.count}: the last ${longest.count - walked.records} ${longest.count - walked.records === 1 ? 'was' : 'were'} removed`,
    });
  const differ = mine
    .filter((c) => c.count <= walked.records && (c.count === 0 ? genesis : walked.at.get(c.count)) !== c.head)
    .sort((a, b) => a.count - b.count);
  if (differ.length) {
    const c = differ[0]!;
    findings.push({
      kind: 'rewritten',
      source: c.source,
      position: c.count,
      message: `the chain up to record ${c.count} is not the one a checkpoint (${c.source}, ${when(c.at)}) vouched for: it was rewritten${differ.length > 1 ? ` (${differ.length - 1} later checkpoints differ too)` : ''}`,
    });
  }
  return findings;
}

/** The checkpoints the database keeps. */
function tableCheckpoints(db: Db, auditId: string): Array<Seen & { id: number }> {
  const rows = db.prepare('SELECT count, head, at, last_id, sig FROM audit_checkpoints ORDER BY seq').all() as Array<{
    count: number;
    head: string;
    at: number;
    last_id: number;
    sig: string;
  }>;
  return rows.map((r) => ({ count: r.count, head: r.head, at: r.at, id: r.last_id, sig: r.sig, audit: auditId, source: 'database' }));
}

/** Opens the file read-only, or says why not (exit 2). */
function openReadOnly(path: string): Db {
  let db: Db;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
  } catch (e) {
    throw new VerifyUnavailable(
      `cannot open the audit ${path}: ${(e as Error).message}`,
      'check the data directory ($UPLINK_DATA_DIR) and that the file is readable',
    );
  }
  db.pragma('busy_timeout = 5000');
  return db;
}

/** `uplink audit verify`: the whole chain, every checkpoint, and the witnesses' checkpoints. */
export function verifyAudit(options: { path: string; witness?: readonly string[] }): AuditVerifyReport {
  const { path } = options;
  const witnesses = (options.witness ?? []).flatMap(readWitness);
  const side = readSideFile(checkpointsPath(path)).map((c): Seen => ({ ...c, source: 'side file' }));
  if (!existsSync(path)) {
    const had = [...side, ...witnesses].reduce((n, c) => Math.max(n, c.count), -1);
    if (had < 0)
      throw new VerifyUnavailable(`there is no audit at ${path}`, 'check the data directory ($UPLINK_DATA_DIR); a hub creates the audit when it first starts');
    return {
      ok: false,
      path,
      audit_id: null,
      records: 0,
      head: '',
      checkpoints: { database: 0, side_file: side.length, witness: witnesses.length },
      findings: [{ kind: 'truncated', message: `the audit ${path} is gone, but checkpoints say it held ${records(had)}: it was deleted` }],
    };
  }
  const db = openReadOnly(path);
  try {
    let version: number;
    try {
      version = Number(db.pragma('user_version', { simple: true }));
    } catch (e) {
      return damagedReport(path, e, side.length, witnesses.length);
    }
    if (version > AUDIT_SCHEMA_VERSION)
      throw new VerifyUnavailable(`${path} was written by a newer Uplink (schema ${version})`, 'verify it with that version of Uplink');
    const auditId = auditIdOf(db);
    if (version < AUDIT_SCHEMA_VERSION || auditId === undefined)
      throw new VerifyUnavailable(
        `${path} has no hash chain yet (schema ${version})`,
        'start the hub (or run `uplink log`) once: opening the audit migrates it and chains the records it holds',
      );
    const findings: AuditFinding[] = [];
    const genesis = genesisHash(auditId);
    const table = tableCheckpoints(db, auditId);
    const all: Seen[] = [...table, ...side, ...witnesses];
    const wanted = new Set(all.map((c) => c.count));
    let walked: Walked;
    try {
      const damage = quickCheck(db);
      if (damage) findings.push({ kind: 'damaged', message: `SQLite finds ${path} damaged: ${damage}` });
      walked = walk(db, { prev: genesis, position: 0, afterId: 0, prevId: 0 }, wanted);
    } catch (e) {
      return damagedReport(path, e, side.length, witnesses.length, auditId);
    }
    findings.push(...walked.findings);
    const { key, finding } = checkKey(db, path);
    if (finding) findings.push(finding);
    findings.push(...checkCheckpoints(all, walked, genesis, auditId, key));
    return {
      ok: findings.length === 0,
      path,
      audit_id: auditId,
      records: walked.records,
      head: walked.records ? walked.head : genesis,
      checkpoints: { database: table.length, side_file: side.length, witness: witnesses.length },
      findings: listed(findings),
    };
  } finally {
    db.close();
  }
}

function listed(findings: AuditFinding[]): AuditFinding[] {
  if (findings.length <= MAX_FINDINGS) return findings;
  return [
    ...findings.slice(0, MAX_FINDINGS),
    { kind: findings[MAX_FINDINGS]!.kind, message: `and ${findings.length - MAX_FINDINGS} more findings (the first are above)` },
  ];
}

function damagedReport(path: string, e: unknown, side: number, witness: number, auditId?: string): AuditVerifyReport {
  return {
    ok: false,
    path,
    audit_id: auditId ?? null,
    records: 0,
    head: '',
    checkpoints: { database: 0, side_file: side, witness },
    findings: [{ kind: 'damaged', message: `SQLite cannot read ${path}: ${cut(String((e as Error)?.message ?? e), 300)} (the file was damaged or truncated)` }],
  };
}

/** `PRAGMA quick_check`'s complaints, or undefined when it finds none. */
export function quickCheck(db: Db): string | undefined {
  return quickCheckProblems(quickCheckLines(db));
}

/** What `QUICK_CHECK` prints on `db`, one line a row (`ok` alone when it finds nothing). */
export function quickCheckLines(db: Db): string[] {
  return (db.pragma(QUICK_CHECK) as Array<Record<string, unknown>>).map((r) => String(Object.values(r)[0]));
}

/** The check `quickCheck` runs (the first ten complaints at most). */
export const QUICK_CHECK = 'quick_check(10)';

/** What `QUICK_CHECK` printed, one line a row, as one line of complaints, or undefined for none. */
export function quickCheckProblems(lines: readonly string[]): string | undefined {
  const problems = lines.filter((t) => t !== 'ok');
  return problems.length ? cut(problems.join('; '), 1000) : undefined;
}

/** Rows after the newest checkpoint `doctor` checks at most (more is the CLI's job). */
const INCREMENTAL_ROWS = 100_000;

/**
 * The live store's chain, checked from its newest checkpoint: what is wrong, in one line, or
 * undefined. Deletions before that checkpoint are for `uplink audit verify` to find.
 */
export function chainProblem(db: Db, auditPath: string): string | undefined {
  const auditId = auditIdOf(db);
  if (auditId === undefined) return 'the audit has no hash chain — hint: restart the hub to migrate it';
  const genesis = genesisHash(auditId);
  const table = tableCheckpoints(db, auditId);
  const side = readSideFile(checkpointsPath(auditPath)).map((c): Seen & { id?: number } => ({ ...c, source: 'side file' }));
  const findings: AuditFinding[] = [];
  const mine = [...table, ...side].filter((c) => c.audit === auditId);
  const newest = mine.reduce<(Seen & { id?: number }) | undefined>((a, c) => (!a || c.count > a.count ? c : a), undefined);
  const { key, finding } = checkKey(db, auditPath);
  if (finding) findings.push(finding);
  // Another audit's checkpoints, and the newest's signature.
  findings.push(
    ...checkCheckpoints(
      [...side.filter((c) => c.audit !== auditId), ...(newest ? [newest] : [])],
      { records: Number.MAX_SAFE_INTEGER, head: '', at: new Map(), findings: [] },
      genesis,
      auditId,
      key,
    ).filter((f) => f.kind !== 'rewritten' && f.kind !== 'truncated'),
  );
  let start: WalkStart = { prev: genesis, position: 0, afterId: 0, prevId: 0 };
  if (newest && newest.count > 0 && typeof newest.id === 'number') {
    const row = db.prepare('SELECT id, hash FROM entries WHERE id = ?').get(newest.id) as { id: number; hash: string | null } | undefined;
    if (!row) {
      const last = (db.prepare('SELECT MAX(id) AS id FROM entries').get() as { id: number | null }).id ?? 0;
      findings.push({
        kind: 'truncated',
        message: `record ${newest.id}, which a checkpoint (${when(newest.at)}) vouched for, is gone: ${last < newest.id ? `the audit now ends at record ${last}` : 'it was deleted'}`,
      });
    } else if (row.hash !== newest.head)
      findings.push({
        kind: 'rewritten',
        message: `record ${newest.id} is not the one a checkpoint (${when(newest.at)}) vouched for: the chain was rewritten`,
      });
    else start = { prev: newest.head, position: newest.count, afterId: newest.id, prevId: newest.id };
  }
  if (findings.length === 0) findings.push(...walk(db, start, new Set(), INCREMENTAL_ROWS).findings);
  if (findings.length === 0) return undefined;
  const more = findings.length > 1 ? ` (and ${findings.length - 1} more)` : '';
  return `the audit's chain is broken: ${findings[0]!.message}${more} — hint: run \`uplink audit verify\` for every finding`;
}

/** `1 record`, `3 records`. */
function records(n: number): string {
  return `${n} record${n === 1 ? '' : 's'}`;
}
