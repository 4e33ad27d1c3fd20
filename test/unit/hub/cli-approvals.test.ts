/**
 * The CLI's approval ids: an exact id, or a unique prefix of at least four characters beyond
 * `appr-` (another hub's prompt also by the part after its `<hub>/`), and one line with a hint
 * for anything else. And the table: escaped, one prompt per line.
 */
import { describe, expect, it } from 'vitest';
import { approvalForCli, approvalSummary, formatApprovals, matchApproval, shortDuration } from '../../../src/main/edges/cli/approvals';
import { parseArgs } from '../../../src/main/edges/cli/args';
import { requestFromArgs } from '../../../src/main/edges/cli/request';
import type { PendingApproval } from '../../../src/main/hub';

const prompt = (approval_id: string, extra: Partial<PendingApproval> = {}): PendingApproval => ({
  approval_id,
  invocation_id: `inv-${approval_id}`,
  agent: { kind: 'mcp', agent_id: 'default', name: 'claude' },
  channel: 'tmux:build',
  channel_labels: ['build'],
  op: 'type',
  capability_id: 'tmux.type',
  args: { text: 'make' },
  provider_id: 'tmux',
  interaction: 'typed',
  requested_at: 1_000,
  expires_at: 121_000,
  ...extra,
});

const pending = [prompt('appr-3f2a9c01b2d4'), prompt('appr-3f2b00000000'), prompt('hub-b/appr-77aa11223344', { hub: 'hub-b' })];
const fails = (query: string): string => {
  try {
    matchApproval(pending, query);
  } catch (e) {
    return (e as { rendered: string }).rendered;
  }
  throw new Error(`${query} matched`);
};

describe('matchApproval', () => {
  it('takes an exact id, or a unique prefix with or without appr-, or after a fleet hub', () => {
    expect(matchApproval(pending, 'appr-3f2a9c01b2d4').approval_id).toBe('appr-3f2a9c01b2d4');
    expect(matchApproval(pending, '3f2a').approval_id).toBe('appr-3f2a9c01b2d4');
    expect(matchApproval(pending, 'appr-3f2b').approval_id).toBe('appr-3f2b00000000');
    expect(matchApproval(pending, '77aa').approval_id).toBe('hub-b/appr-77aa11223344');
    expect(matchApproval(pending, 'hub-b/appr-77aa').approval_id).toBe('hub-b/appr-77aa11223344');
  });

  it('refuses an ambiguous, unknown or too short one in one line with a hint', () => {
    expect(fails('3f2')).toBe(
      'uplink error [core:Invalid]: approval id "3f2" is too short: give at least 4 characters of it — hint: copy the id from `uplink approvals`',
    );
    expect(fails('appr-3f2')).toContain('is too short');
    expect(() => matchApproval([...pending, prompt('appr-3f2a00000000')], '3f2a')).toThrow(
      'approval id "3f2a" is ambiguous: it matches 2 (appr-3f2a9c01b2d4, appr-3f2a00000000)',
    );
    expect(fails('ffff')).toBe(
      'uplink error [core:NotFound]: no pending approval matches "ffff" — hint: it may have been decided or timed out already: list what is pending with `uplink approvals`',
    );
    expect(fails('\u001b[2Jzzzz')).toContain('"\\x1b[2Jzzzz"');
  });

  it('the command line takes the same prefixes and refuses a short one before asking the hub (exit 2)', () => {
    expect(requestFromArgs(parseArgs(['approve', '3f2a', '--always']))).toEqual({ command: 'approve', args: { id: '3f2a', decision: 'always' } });
    expect(requestFromArgs(parseArgs(['deny', '3f2a', '--reason', 'no']))).toEqual({ command: 'deny', args: { id: '3f2a', reason: 'no' } });
    expect(() => requestFromArgs(parseArgs(['deny', 'ab']))).toThrow('is too short');
    expect(() => requestFromArgs(parseArgs(['channels', '--always']))).toThrow('--always is for approve');
    expect(() => requestFromArgs(parseArgs(['approve', '3f2a', '--reason', 'x']))).toThrow('--reason is for deny');
  });
});

describe('the approvals table', () => {
  it('is one escaped line per prompt with age and time left', () => {
    const hostile = prompt('appr-3f2a9c01b2d4', { channel: 'tmux:x\u001b[31m', agent: { kind: 'mcp', agent_id: 'default', name: 'a\nb' } });
    const text = formatApprovals([hostile], 61_000);
    const lines = text.split('\n');
    expect(lines).toHaveLength(3);
    expect(text).not.toContain('\u001b');
    expect(lines[1]).toMatch(/^appr-3f2a9c01b2d4\s+1m00s\s+default \(declares "a\\nb"\)\s+tmux:x\\x1b\[31m\s+type\s+1m00s\s+\{"text":"make"\}$/);
    expect(formatApprovals([], 0)).toBe('no approvals pending');
    expect(formatApprovals([], 0, 0)).toContain('no panel is attached');
  });

  it('summarises by the preview in words when there is one, and leaves the picture out', () => {
    const a = prompt('appr-1', { preview: { text: '\n  type "make" into build\nmore', image_png: 'iVBOR' } });
    expect(approvalSummary(a)).toBe('type "make" into build');
    expect(approvalForCli(a)).toMatchObject({ preview: { text: '\n  type "make" into build\nmore' } });
    expect(JSON.stringify(approvalForCli(a))).not.toContain('iVBOR');
    expect(approvalForCli(prompt('appr-2', { preview: { image_png: 'iVBOR' } }))).not.toHaveProperty('preview');
    expect([shortDuration(-5), shortDuration(59_999), shortDuration(3_725_000)]).toEqual(['0s', '59s', '1h02m']);
  });
});
