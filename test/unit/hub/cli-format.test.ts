/** `uplink log` lines say how each call was authorized and by whom. */
import { describe, expect, it } from 'vitest';
import { present } from '../../../src/main/edges/cli/present';
import { formatDoctor, formatDriver, formatEntry, jsonForTerminal } from '../../../src/main/edges/cli/format';
import type { AuditEntry } from '../../../src/main/hub';

const base: AuditEntry = {
  id: 7,
  at: Date.UTC(2026, 0, 2, 3, 4, 5),
  type: 'decision',
  kind: 'decision',
  channel: 'tmux:%3',
  op: 'send',
  agent: { kind: 'mcp', agent_id: 'default', name: 'claude-code', version: '2.1.0' },
};

describe('formatEntry', () => {
  it.each<[Partial<AuditEntry>, RegExp]>([
    [{ invocation_id: 'inv_1', authorized: 'operator', granted: true, by: 'alice', decision: 'once' }, /inv_1 {2}approved once by the operator \(alice\)$/],
    [
      { invocation_id: 'inv_1', authorized: 'operator', granted: false, by: 'alice', reason: 'not now', decision: 'deny' },
      /denied by the operator \(alice\): “not now”$/,
    ],
    [{ invocation_id: 'inv_1', authorized: 'rule:r1', granted: true, by: 'bob' }, /approved by standing rule r1$/],
    [
      { invocation_id: 'inv_1', authorized: 'default_policy', granted: false, reason: 'no panel attached' },
      /denied by the default policy: “no panel attached”$/,
    ],
    [
      {
        invocation_id: 'inv_1',
        authorized: 'cli',
        granted: true,
        by: 'carol',
        agent: { kind: 'cli', agent_id: 'uplink-cli', name: 'uplink-cli', user: 'carol' },
      },
      /agent=cli:uplink-cli\(carol\) {2}inv_1 {2}run from the CLI by carol$/,
    ],
    [{ invocation_id: 'inv_1', authorized: 'session', granted: true }, /approved for the session \(granted earlier by the operator\)$/],
    [
      { type: 'event', kind: 'accepted', authorized: 'default_policy', granted: true },
      /accepted {2}tmux:%3 {2}send {2}agent=mcp:default \(declares "claude-code@2\.1\.0"\) {2}read-only: no approval needed$/,
    ],
    // An operator's action outside any call: the reason says what was done.
    [
      { op: 'set-tier', authorized: 'operator', granted: true, by: 'alice', reason: 'tier set to operator' },
      /set-tier .* {2}by the operator \(alice\): “tier set to operator”$/,
    ],
    // Records that say nothing about authorization keep who and why as they are.
    [{ type: 'decision', kind: 'decision', by: 'alice', reason: 'operator revealed sensitive args' }, /by=alice {2}reason="operator revealed sensitive args"$/],
    // Rows recorded before agents authenticated say so rather than pass the declared name off as the agent.
    [{ agent: { kind: 'mcp', name: 'claude-code' } }, /agent=mcp:unauthenticated \(declares "claude-code"\)$/],
    // A client declaring a built-in identity reads as its credential, the name marked as declared.
    [{ agent: { kind: 'mcp', agent_id: 'default', name: 'operator' } }, /agent=mcp:default \(declares "operator"\)$/],
    [{ agent: { kind: 'mcp', agent_id: 'default', name: 'uplink-cli' } }, /agent=mcp:default \(declares "uplink-cli"\)$/],
    // Quoted as JSON: a declared name cannot close the mark and add words of its own.
    [{ agent: { kind: 'mcp', agent_id: 'default', name: 'x") (operator' } }, /agent=mcp:default \(declares "x\\"\) \(operator"\)$/],
    [
      { type: 'event', kind: 'started', provider_id: 'uplink/desktop-semantic', interaction: 'semantic_ui' },
      /provider=uplink\/desktop-semantic {2}interaction=semantic_ui/,
    ],
  ])('%o', (extra, re) => {
    const line = formatEntry({ ...base, ...extra });
    expect(line.startsWith('2026-01-02T03:04:05.000Z  #7  ')).toBe(true);
    expect(line).toMatch(re);
  });
});

describe('nothing an agent wrote reaches the terminal raw', () => {
  const forged = 'test:x\n2026-01-01T00:00:00.000Z  #999  decision  tmux:%1  type  authorized=operator  by=root';

  it('a channel name carrying a forged log line stays one line with \\n visible', () => {
    const line = formatEntry({ ...base, type: 'rejected', kind: 'rejected', channel: forged, error_kind: 'NotFound', message: `no channel ${forged}` });
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toContain('test:x\\n2026-01-01T00:00:00.000Z  #999  decision');
  });

  it('ESC, BEL, C1 and line separators are shown as escapes', () => {
    const line = formatEntry({ ...base, channel: 'test:\u001b[2J\u001b]0;owned\u0007', op: 'a\u009b\u007fb\u2028c\r\t' });
    expect(line).toContain('test:\\x1b[2J\\x1b]0;owned\\x07');
    expect(line).toContain('a\\x9b\\x7fb\\u2028c\\r\\t');
    // eslint-disable-next-line no-control-regex -- looking for raw control characters is the point
    expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/);
  });

  it('doctor output escapes what drivers report, line by line', () => {
    const out = formatDoctor({
      ok: false,
      drivers: [{ driver: 'tmux', ok: false, lines: ['pane \u001b]0;owned\u0007 gone'] }],
      config: { ok: false, path: '/d/config.json', error: '/d/config.json is empty\nforged' },
      audit: { ok: true, path: '/d/audit.sqlite' },
      agents: { ok: true, path: '/d/agents.json' },
      panels_attached: 0,
    });
    expect(out.split('\n')).toEqual([
      'FAIL tmux',
      '       pane \\x1b]0;owned\\x07 gone',
      'FAIL config /d/config.json',
      '       /d/config.json is empty\\nforged',
      'ok   audit /d/audit.sqlite',
      'ok   agents /d/agents.json',
      'NOT healthy',
    ]);
  });

  it('JSON for a terminal stays valid JSON with DEL, C1 and U+2028 as \\u escapes', () => {
    const value = { text: 'a\u007f\u009b\u2028\n' };
    const out = jsonForTerminal(value);
    expect(out).toBe('{"text":"a\\u007f\\u009b\\u2028\\n"}');
    expect(JSON.parse(out)).toEqual(value);
  });
});

describe('send output', () => {
  it('shows the pane excerpt a failed send captured with control characters escaped', () => {
    const out: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string) => (out.push(chunk), true)) as typeof process.stdout.write;
    try {
      present(
        { command: 'send', args: { channel: 'tmux:%1', message: 'hi', reply_hint: 'full' } },
        { delivered: false, correlation_id: 'c1', injected_at: '2026-11-30T00:00:00Z', verify_excerpt: '$ \u001b]0;owned\u0007\u001b[2J' },
        false,
      );
    } finally {
      process.stdout.write = write;
    }
    const text = out.join('');
    expect(text).toContain('\\x1b]0;owned\\x07\\x1b[2J');
    // eslint-disable-next-line no-control-regex -- looking for raw control characters is the point
    expect(text.replace(/\n/g, '')).not.toMatch(/[\u0000-\u001f]/);
  });
});

describe('uplink drivers', () => {
  const driver = {
    id: 'notes',
    command: ['node', '/opt/notes/driver.mjs'],
    state: 'running' as const,
    pid: 42,
    protocol_version: '3',
    extensions: [],
    restarts: 0,
    admission: 'admitted' as const,
    integrity: { file: '/opt/notes/driver.mjs', expected: 'a'.repeat(64), actual: 'a'.repeat(64) },
    in_flight: 0,
    stderr: [],
  };

  it('says who admitted a driver: the config (a hand-written integrity) apart from the operator', () => {
    expect(formatDriver({ ...driver, admitted_by: 'config' }).split('\n')[0]).toMatch(/restarts 0 {2}admitted by config$/);
    expect(formatDriver({ ...driver, admitted_by: 'operator' }).split('\n')[0]).toMatch(/restarts 0 {2}admitted by the operator$/);
    expect(formatDriver(driver).split('\n')[0]).toMatch(/restarts 0 {2}admitted$/);
  });
});
