/** `uplink log` lines say how each call was authorized and by whom. */
import { describe, expect, it } from 'vitest';
import { formatEntry } from '../../../src/main/edges/cli/format';
import type { AuditEntry } from '../../../src/main/hub';

const base: AuditEntry = { id: 7, at: Date.UTC(2026, 0, 2, 3, 4, 5), type: 'decision', kind: 'decision', channel: 'tmux:%3', op: 'send', agent: { kind: 'mcp', agent_id: 'default', name: 'claude-code', version: '2.1.0' } };

describe('formatEntry', () => {
  it.each<[Partial<AuditEntry>, RegExp]>([
    [{ authorized: 'operator', granted: true, by: 'alice' }, /authorized=operator {2}by=alice/],
    [{ authorized: 'operator', granted: false, by: 'alice', reason: 'not now' }, /denied=operator {2}by=alice {2}reason="not now"/],
    [{ authorized: 'rule:r1', granted: true, by: 'bob' }, /authorized=rule:r1 {2}by=bob/],
    [{ authorized: 'default_policy', granted: false, reason: 'no panel attached' }, /denied=default_policy {2}reason="no panel attached"/],
    [{ authorized: 'cli', granted: true, by: 'carol', agent: { kind: 'cli', agent_id: 'uplink-cli', name: 'uplink-cli', user: 'carol' } }, /agent=cli:uplink-cli\(carol\) {2}authorized=cli {2}by=carol/],
    [{ authorized: 'session', granted: true }, /authorized=session/],
    [{ type: 'event', kind: 'accepted', authorized: 'default_policy', granted: true }, /accepted {2}tmux:%3 {2}send {2}agent=mcp:default \(claude-code@2\.1\.0\) {2}authorized=default_policy/],
    // Rows recorded before agents authenticated say so rather than pass the declared name off as the agent.
    [{ agent: { kind: 'mcp', name: 'claude-code' } }, /agent=mcp:claude-code \(unauthenticated\)$/],
    [{ type: 'event', kind: 'started', provider_id: 'uplink/desktop-semantic', interaction: 'semantic_ui' }, /provider=uplink\/desktop-semantic {2}interaction=semantic_ui/],
  ])('%o', (extra, re) => {
    const line = formatEntry({ ...base, ...extra });
    expect(line.startsWith('2026-01-02T03:04:05.000Z  #7  ')).toBe(true);
    expect(line).toMatch(re);
  });
});
