/**
 * The CLI against hostile input: channel names that forge log lines or carry terminal escapes stay
 * one inert line, `log --limit` above a page is honoured, and bad flags are refused in one line.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { AuditStore } from '../../../src/main/hub/audit/store';
import { spawn } from 'node:child_process';
import { buildForTests, cliEnv, runCli, tmpDataDir } from '../../fixtures/hub-build';
import type { TestBuild } from '../../fixtures/hub-build';

let b: TestBuild;

beforeAll(async () => {
  b = await buildForTests();
});

const FORGED = 'test:x\n2026-01-01T00:00:00.000Z  #999  decision  tmux:%1  type  authorized=operator  by=root';
const ESCAPES = 'test:\u001b[2J\u001b]0;owned\u0007';
// eslint-disable-next-line no-control-regex -- looking for raw control characters is the point
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/;

describe('uplink CLI output is inert', () => {
  it('a channel forging a decision line is one error line, and one log line with \\n visible', async () => {
    const d = tmpDataDir();
    const err = await runCli(b, d, ['ops', FORGED]);
    expect(err.code).toBe(1);
    expect(err.stderr.split('\n')).toEqual([expect.stringContaining('no channel test:x\\n2026-01-01T00:00:00.000Z  #999  decision'), '']);
    const log = await runCli(b, d, ['log', '--channel', FORGED]);
    expect(log.code).toBe(0);
    const lines = log.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\S+Z {2}#\d+ {2}rejected {2}test:x\\n2026-01-01T00:00:00\.000Z {2}#999 {2}decision/);
  });

  it('escape sequences in a channel name never reach the terminal raw', async () => {
    const d = tmpDataDir();
    const err = await runCli(b, d, ['ops', ESCAPES]);
    expect(err.stderr).toContain('test:\\x1b[2J\\x1b]0;owned\\x07');
    expect(err.stderr).not.toMatch(RAW_CONTROL);
    const log = await runCli(b, d, ['log']);
    expect(log.stdout).toContain('test:\\x1b[2J\\x1b]0;owned\\x07');
    expect(log.stdout).not.toMatch(RAW_CONTROL);
  });
});

/** A data dir whose audit holds `n` rejected calls, `op-0` … `op-<n-1>`. */
function withRecords(n: number): string {
  const d = tmpDataDir();
  const store = new AuditStore(join(d, 'audit.sqlite'));
  store.appendMany(
    Array.from({ length: n }, (_, i) => ({
      at: 1_700_000_000_000 + i,
      type: 'rejected' as const,
      kind: 'rejected' as const,
      channel: 'test:alpha',
      op: `op-${i}`,
      state: 'rejected' as const,
    })),
  );
  store.close();
  return d;
}

describe('uplink log flags', () => {
  it('--limit above one page returns that many entries, newest last', async () => {
    const d = withRecords(5100);
    const r = await runCli(b, d, ['log', '--json', '--limit', '5000']);
    expect(r.code).toBe(0);
    const ops = r.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { op: string }).op);
    expect(ops).toHaveLength(5000);
    expect(ops[0]).toBe('op-100');
    expect(ops[4999]).toBe('op-5099');
    expect(new Set(ops).size).toBe(5000);
  });

  it('a reader that closes early (`uplink log | head -1`) ends the CLI quietly, with no stack', async () => {
    const d = withRecords(3000);
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [b.launcher, 'log', '--limit', '3000'], { env: cliEnv(b, d), cwd: process.cwd() });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      // Like `head -1`: read the first chunk, then close the pipe while the CLI is still writing.
      child.stdout.once('data', () => child.stdout.destroy());
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stderr }));
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('an unknown --state is refused, listing the valid ones', async () => {
    const r = await runCli(b, tmpDataDir(), ['log', '--state', 'bogus']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'uplink error [core:Invalid]: --state cannot be "bogus" — hint: use one of succeeded, failed, denied, timed_out, cancelled, lost, rejected; see `uplink --help`\n',
    );
  });

  it.each([
    [['log', '--limit', '0'], '--limit must be an integer from 1 to 1000000, not "0"'],
    [['log', '--limit', '-5'], '--limit must be an integer from 1 to 1000000, not "-5"'],
    [['log', '--limit', '5k'], '--limit must be an integer from 1 to 1000000, not "5k"'],
    [['recv', '--cursor', '99999999999999999999'], '--cursor must be a non-negative integer, not "99999999999999999999"'],
  ])('%j is refused in one line', async (argv, message) => {
    const r = await runCli(b, tmpDataDir(), argv);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`uplink error [core:Invalid]: ${message} — hint: see \`uplink --help\`\n`);
  });
});
