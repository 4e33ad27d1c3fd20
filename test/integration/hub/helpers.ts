/** Shared set-up of the in-process hub tests: a hub over the fixture driver, closed after each test. */
import { copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { journalDir } from '../../../src/main/hub/audit/journal';
import { AuditStore } from '../../../src/main/hub/audit/store';
import { createHub } from '../../../src/main/hub/hub-core';
import type { ApprovalEvent, Hub, PendingApproval } from '../../../src/main/hub';
import { createTestDriver } from '../../fixtures/test-driver';
import { tmpDataDir } from '../../fixtures/hub-build';

const open: Hub[] = [];

type TestDriver = ReturnType<typeof createTestDriver>;

/**
 * Sets `approvals.when_no_panel: "deny"` in `<dir>/config.json`, keeping the rest: a mutating call
 * with no panel attached is then refused at once instead of waiting its timeout for one.
 */
export function denyWithoutPanel(dir: string): void {
  const path = join(dir, 'config.json');
  const config = existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as { approvals?: Record<string, unknown> }) : {};
  writeFileSync(path, JSON.stringify({ ...config, approvals: { ...config.approvals, when_no_panel: 'deny' } }, null, 2));
}

/** A hub over the fixture driver (a fresh one unless given) on `dir` (a new data dir unless given); `denyWithoutPanel` see above. */
export function openHub(
  options: { dir?: string; driver?: TestDriver; driverTimeoutMs?: number; progressIntervalMs?: number; panelGraceMs?: number; denyWithoutPanel?: boolean } = {},
): {
  hub: Hub;
  driver: TestDriver;
  dir: string;
} {
  const { dir = tmpDataDir(), driver = createTestDriver(), denyWithoutPanel: deny, ...hubOptions } = options;
  if (deny) denyWithoutPanel(dir);
  const hub = createHub({ dataDir: dir, drivers: [driver], progressIntervalMs: 50, ...hubOptions });
  open.push(hub);
  return { hub, driver, dir };
}

/** Closes every hub `openHub` made (call from afterEach). */
export async function closeHubs(): Promise<void> {
  await Promise.all(open.splice(0).map((h) => h.close()));
}

export { failure } from '../../fixtures/failure';

/**
 * The audit rows the next process would find if this one were killed now: a copy of the data
 * dir's audit files as a crash would leave them (database, WAL, journals), opened by a fresh store
 * (which replays the journals), read raw.
 */
export function auditRowsIfKilledNow(dir: string): Array<Record<string, unknown>> {
  const copy = mkdtempSync(join(tmpdir(), 'uplink-killed-'));
  try {
    for (const f of ['audit.sqlite', 'audit.sqlite-wal']) if (existsSync(join(dir, f))) copyFileSync(join(dir, f), join(copy, f));
    const journals = journalDir(join(dir, 'audit.sqlite'));
    if (existsSync(journals)) cpSync(journals, journalDir(join(copy, 'audit.sqlite')), { recursive: true });
    new AuditStore(join(copy, 'audit.sqlite')).close();
    const db = new Database(join(copy, 'audit.sqlite'), { readonly: true });
    try {
      return db.prepare('SELECT * FROM entries ORDER BY id').all() as Array<Record<string, unknown>>;
    } finally {
      db.close();
    }
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

/** Waits for the next prompt the panel would show. */
export function nextPrompt(hub: Hub): Promise<PendingApproval> {
  return new Promise((resolve) => {
    const off = hub.subscribeApprovals((e: ApprovalEvent) => {
      if (e.type === 'added') {
        off();
        resolve(e.approval);
      }
    });
  });
}
