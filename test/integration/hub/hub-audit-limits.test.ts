/**
 * The audit fails closed and never stalls: input nested or sized to break the audit is refused
 * first and recorded as a bounded row, other calls keep being audited behind it; a full disk
 * refuses new calls with one line and the hub recovers by itself; damage in the file shows in
 * doctor. Real SQLite files throughout, and a real full disk (a small tmpfs).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, rmSync, statSync, writeSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { AgentIdentity, PendingApproval } from '../../../src/main/hub';
import { HubError } from '../../../src/main/hub';
import type { JsonValue } from '../../../src/main/kernel/types';
import { createBroadcast, openPanelSession } from '../../../src/main/edges/panel';
import { auditRowsIfKilledNow, closeHubs, failure, openHub } from './helpers';
import { noTmpfs } from '../../fixtures/prerequisite';

const agent: AgentIdentity = { kind: 'mcp', name: 'deep-agent', version: '1' };

afterEach(closeHubs);

function nested(depth: number): JsonValue {
  let v: JsonValue = {};
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

/** Bytes the audit takes on disk: database, WAL and journals. */
function auditBytes(dir: string): number {
  let total = 0;
  for (const f of ['audit.sqlite', 'audit.sqlite-wal']) if (existsSync(join(dir, f))) total += statSync(join(dir, f)).size;
  const pending = join(dir, 'audit.pending');
  if (existsSync(pending)) for (const f of readdirSync(pending)) total += statSync(join(pending, f)).size;
  return total;
}

describe('bounded input before any recursion or storage', () => {
  it('args nested 6,000 deep are refused with one line, audited as a bounded row, and the calls behind are audited', async () => {
    const { hub, dir } = openHub();
    const live: string[] = [];
    hub.subscribe((entry) => live.push(JSON.stringify(entry)));
    const err = await failure(hub.invoke('test:alpha', 'echo', { text: 'x', deep: nested(6000) }, { agent }));
    expect(err.rendered).toBe(
      'uplink error [core:Invalid]: args nest deeper than 64 levels — hint: flatten the args (at most 64 levels of objects and arrays)',
    );
    for (let i = 0; i < 50; i++) expect(await hub.invoke('test:alpha', 'echo', { text: `read ${i}` }, { agent })).toEqual({ text: `read ${i}` });
    const rows = auditRowsIfKilledNow(dir);
    const rejected = rows.find((r) => r.type === 'rejected');
    expect(rejected).toMatchObject({
      channel: 'test:alpha',
      op: 'echo',
      error_kind: 'Invalid',
      message: 'args nest deeper than 64 levels',
      args: '"<not stored: nesting deeper than 64>"',
    });
    expect(rows.filter((r) => r.kind === 'succeeded')).toHaveLength(50);
    // A decision still commits: the queue is not stuck behind the refused row.
    hub.attachPanel();
    const prompt = new Promise<PendingApproval>((resolve) => hub.subscribeApprovals((e) => e.type === 'added' && resolve(e.approval)));
    const write = hub.invoke('test:alpha', 'write', { text: 'y' }, { agent });
    await hub.decide((await prompt).approval_id, { kind: 'once', by: 'alice' });
    expect(await write).toEqual({ written: 1 });
    // The live stream and the history have it too.
    expect(hub.queryAudit({ state: 'rejected' }).entries[0]).toMatchObject({ args: '<not stored: nesting deeper than 64>' });
    await vi.waitFor(() => expect(live.filter((l) => l.includes('"succeeded"'))).toHaveLength(51), { timeout: 10_000 });
    expect(live.find((l) => l.includes('"rejected"'))).toContain('<not stored: nesting deeper than 64>');
  });

  it("the panel's runOp is bounded the same way", async () => {
    const { hub } = openHub();
    const s = openPanelSession(hub, { version: '0.1.0', user: 'alice' }, createBroadcast(), () => undefined, Date.now());
    const r = await s.handlers.runOp({ channel: 'test:alpha', op: 'echo', args: { text: 'x', deep: nested(6000) } });
    expect(r).toEqual({
      ok: false,
      error: 'uplink error [core:Invalid]: args nest deeper than 64 levels — hint: flatten the args (at most 64 levels of objects and arrays)',
    });
    const c = await s.handlers.runOp({ channel: `test:${'x'.repeat(100_000)}`, op: 'noop', args: {} });
    expect(c).toMatchObject({ ok: false, error: expect.stringMatching(/^uplink error \[core:Invalid\]: the channel is 100005 characters; the limit is 512/) });
    expect(await s.handlers.runOp({ channel: 'test:alpha', op: 'noop', args: {} })).toEqual({ ok: true, output: { ok: true } });
    s.close();
  });

  it('args at the depth limit pass the bounds; one level more does not', async () => {
    const { hub } = openHub();
    // The args object is the first level: 1 + 63 levels of `deep` (the innermost `{}` counts).
    expect((await failure(hub.invoke('test:alpha', 'echo', { text: 'x', deep: nested(63) }, { agent }))).message).toBe('args nest deeper than 64 levels');
    const err = await failure(hub.invoke('test:alpha', 'echo', { text: 'x', deep: nested(62) }, { agent }));
    // Past the bounds, the op's own schema refuses the extra property.
    expect(err.rendered).toMatch(/^uplink error \[test:Invalid\]: args for echo do not match its params_schema/);
  });

  it('a 2 MB channel or op is refused naming the limit and grows the audit by less than 64 KiB over 20 calls', async () => {
    const { hub, dir } = openHub();
    await hub.invoke('test:alpha', 'noop', {}, { agent });
    await hub.close();
    const before = auditBytes(dir);
    const { hub: again } = openHub({ dir });
    const huge = 'x'.repeat(2 * 1024 * 1024);
    const bigAgent: AgentIdentity = { kind: 'mcp', name: huge, version: huge };
    for (let i = 0; i < 10; i++) {
      const a = await failure(again.invoke(`test:${huge}`, 'noop', {}, { agent: bigAgent }));
      expect(a.rendered).toMatch(/^uplink error \[core:Invalid\]: the channel is 2097157 characters; the limit is 512 — hint: /);
      const b = await failure(again.invoke('test:alpha', huge, {}, { agent: bigAgent }));
      expect(b.rendered).toMatch(/^uplink error \[core:Invalid\]: the op name is 2097152 characters; the limit is 128 — hint: /);
    }
    const rows = again.queryAudit({ state: 'rejected' }).entries;
    expect(rows).toHaveLength(20);
    expect(rows[0]!.agent!.name.length).toBeLessThan(300);
    await again.close();
    expect(auditBytes(dir) - before).toBeLessThan(64 * 1024);
  });
});

describe('a full disk', () => {
  const mounts: string[] = [];
  afterEach(() => {
    for (const m of mounts.splice(0)) {
      try {
        execFileSync('umount', ['-l', m]);
      } catch {
        // already gone
      }
      rmSync(m, { recursive: true, force: true });
    }
  });

  /** A data dir on its own small tmpfs, or undefined where mounting is not allowed. */
  function smallDisk(): string | undefined {
    const m = join(tmpdir(), `uplink-full-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
    mkdirSync(m);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', m], { stdio: 'ignore' });
    } catch {
      rmSync(m, { recursive: true, force: true });
      return undefined;
    }
    mounts.push(m);
    return m;
  }

  /** Fills the disk with one file; returns it. */
  function fill(disk: string): string {
    const path = join(disk, 'filler');
    const fd = openSync(path, 'w');
    const chunk = Buffer.alloc(64 * 1024, 1);
    try {
      for (;;) writeSync(fd, chunk);
    } catch {
      // ENOSPC: full. Fill the last bytes too.
      const one = Buffer.alloc(1);
      try {
        for (;;) writeSync(fd, one);
      } catch {
        // full
      }
    } finally {
      closeSync(fd);
    }
    return path;
  }

  it('refuses new calls with one line, never answers unaudited, doctor says why, and it recovers by itself', async (ctx) => {
    const disk = smallDisk();
    if (!disk) return noTmpfs().need(ctx);
    const dir = join(disk, 'data');
    const { hub } = openHub({ dir });
    // A panel is open: it is told when the audit fails and when it recovers.
    const statuses: Array<string | undefined> = [];
    const panel = openPanelSession(
      hub,
      { version: '0.1.0', user: 'alice' },
      createBroadcast(),
      (event, payload) => {
        if (event === 'hubStatus') statuses.push((payload as { audit_error?: string }).audit_error);
      },
      Date.now(),
    );
    expect(await hub.invoke('test:alpha', 'noop', {}, { agent })).toEqual({ ok: true });
    const filler = fill(disk);
    const answered: string[] = [];
    let refused: string | undefined;
    for (let i = 0; i < 200 && !refused; i++) {
      try {
        await hub.invoke('test:alpha', 'echo', { text: `full ${i}` }, { agent });
        answered.push(`full ${i}`);
      } catch (e) {
        refused = (e as { rendered: string }).rendered;
      }
    }
    expect(refused).toMatch(/^uplink error \[core:Unavailable\]: the audit log cannot be written \((ENOSPC|SQLITE_FULL)[^)]*\) — hint: free disk space/);
    // Refused before running, every time, while the disk is full.
    const again = await failure(hub.invoke('test:alpha', 'echo', { text: 'still full' }, { agent }));
    expect(again.rendered).toMatch(/^uplink error \[core:Unavailable\]: the audit log cannot be written/);
    // A refusal made at an edge (bad tool arguments) is an answer too: it is not sent unaudited.
    const edge = hub.recordRejected({ channel: 'test:alpha', op: 'echo', agent }, new HubError('core', 'Invalid', 'bad tool arguments'));
    expect(edge.rendered).toMatch(/^uplink error \[core:Unavailable\]: the audit log cannot be written/);
    const doctor = await hub.doctor();
    expect(doctor.ok).toBe(false);
    expect(doctor.audit).toMatchObject({ ok: false, error: expect.stringMatching(/^the audit log cannot be written \((ENOSPC|SQLITE_FULL)/) });
    rmSync(filler);
    // Writing works again: the hub recovers without a restart.
    let back: JsonValue | undefined;
    for (let i = 0; i < 20 && back === undefined; i++) {
      back = await hub.invoke('test:alpha', 'echo', { text: 'back' }, { agent }).catch(() => undefined);
      if (back === undefined) await new Promise((r) => setTimeout(r, 100));
    }
    expect(back).toEqual({ text: 'back' });
    expect((await hub.doctor()).audit.ok).toBe(true);
    expect(statuses.find((s) => s !== undefined)).toMatch(/^(ENOSPC|SQLITE_FULL)/);
    expect(statuses.at(-1)).toBeUndefined();
    panel.close();
    // Every read the agent heard of is in the audit a kill -9 would leave.
    const rows = auditRowsIfKilledNow(dir);
    const texts = rows.filter((r) => r.kind === 'accepted' && typeof r.args === 'string').map((r) => (JSON.parse(r.args as string) as { text?: string }).text);
    for (const t of [...answered, 'back']) expect(texts).toContain(t);
  });
});

describe('doctor and the audit file', () => {
  it('reports a damaged page in the middle of audit.sqlite', async () => {
    const { hub, dir } = openHub();
    for (let i = 0; i < 400; i++) await hub.invoke('test:alpha', 'echo', { text: `row ${i} ${'x'.repeat(200)}` }, { agent });
    expect((await hub.doctor()).audit.ok).toBe(true);
    await hub.close();
    const path = join(dir, 'audit.sqlite');
    const db = new Database(path, { readonly: true });
    const pageSize = Number(db.pragma('page_size', { simple: true }));
    const pages = Number(db.pragma('page_count', { simple: true }));
    db.close();
    expect(pages).toBeGreaterThan(20);
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.alloc(pageSize, 0x5a), 0, pageSize, Math.floor(pages / 2) * pageSize);
    closeSync(fd);
    const { hub: reopened } = openHub({ dir });
    const doctor = await reopened.doctor();
    expect(doctor.ok).toBe(false);
    expect(doctor.audit).toMatchObject({ ok: false, error: expect.stringContaining('the integrity check of') });
  });
});
