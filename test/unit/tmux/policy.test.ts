import { describe, expect, it } from 'vitest';
import { DriverError } from '../../../src/main/drivers/contract';
import { classifyKey, decide, parseTier, requireTier, type PaneMarks } from '../../../src/main/drivers/tmux/policy';
import { configProblems } from '../../../src/main/drivers/tmux/config';

const pane = (marks: Partial<PaneMarks> = {}): PaneMarks => ({ id: '%3', readOff: false, ...marks });

describe('tmux policy', () => {
  it('parses tiers exactly', () => {
    expect(parseTier('operator')).toBe('operator');
    expect(parseTier('Operator')).toBeUndefined();
    expect(parseTier('')).toBeUndefined();
  });

  it('classifies keys: benign, dangerous, or invalid', () => {
    for (const k of ['Enter', 'Escape', 'Tab', 'Space', 'BSpace', 'Up', 'Down', 'Left', 'Right', 'PageUp', 'PageDown', 'NPage', 'PPage', 'Home', 'End']) {
      expect(classifyKey(k)).toBe('benign');
    }
    for (const k of ['C-c', 'M-x', '^D', 'C-M-x', 'M-Enter', 'C-Up', 'S-C-a', 'C-\\', 'M-F1']) expect(classifyKey(k)).toBe('dangerous');
    for (const k of ['enter', 'DoRootThings', 'a', 'F1', 'S-Up', 'C-', 'C-rm -rf /', 'M-xyz', '^', '^ab', 'C- ', 'c-c'])
      expect(() => classifyKey(k)).toThrow(DriverError);
  });

  it('the pane option decides alone; junk pins observer; config fills in by id or human label', () => {
    const cfg = {
      write_allow: [
        { pattern: 'lab-*', tier: 'godmode' as const },
        { pattern: '%9', tier: 'operator' as const },
      ],
    };
    expect(decide(pane({ label: 'lab-1', profile: 'observer' }), cfg).tier).toBe('observer');
    expect(decide(pane({ label: 'lab-1', profile: 'sudo' }), cfg).tier).toBe('observer');
    expect(decide(pane({ label: 'lab-1' }), cfg)).toMatchObject({ tier: 'godmode', source: 'config' });
    expect(decide(pane({ id: '%9' }), cfg).tier).toBe('operator');
    expect(decide(pane(), cfg)).toMatchObject({ tier: 'observer', source: 'default' });
    // A label an agent set never grants; the human label before it still does.
    expect(decide(pane({ label: 'lab-1', agentLabel: 'lab-1' }), cfg).tier).toBe('observer');
    expect(decide(pane({ label: 'x', agentLabel: 'x', firstLabel: 'lab-2' }), cfg).tier).toBe('godmode');
  });

  it('read denies are sticky across labels and fail closed on malformed panes', () => {
    const cfg = { read_deny: ['customer-*'] };
    expect(decide(pane({ label: 'customer-nas', profile: 'godmode' }), cfg).readBlock).toMatch(/customer-\*/);
    expect(decide(pane({ label: 'harmless' }), cfg, ['customer-nas']).readBlock).toMatch(/customer-\*/);
    expect(decide(pane({ label: 'harmless' }), cfg).readBlock).toBeUndefined();
    expect(decide(pane({ readOff: true }), {}).readBlock).toMatch(/@uplink_read/);
    expect(decide(pane({ malformed: true, readOff: true, profile: 'godmode' }), {})).toMatchObject({ tier: 'observer' });
  });

  it('tier errors name the needed tier and the pane tier, and tell the agent to ask the operator, never how a grant is made', () => {
    const error = (() => {
      try {
        requireTier({ tier: 'observer', source: 'default' }, 'operator', 'type', pane({ label: 'codex' }));
      } catch (e) {
        return e as DriverError;
      }
      throw new Error('no error');
    })();
    expect(error.kind).toBe('Rejected');
    expect(error.message).toBe('type needs tier operator; pane %3 (codex) is observer (from default)');
    expect(error.hint).toBe('ask the operator to grant operator on this pane in the Uplink panel');
    for (const recipe of ['@uplink_profile', 'set -p', 'write_allow', 'config.json']) expect(`${error.message} ${error.hint}`).not.toContain(recipe);
  });

  it('reports config problems', () => {
    expect(configProblems({})).toEqual([]);
    expect(
      configProblems({
        socket: 3,
        write_allow: [
          { pattern: '', tier: 'operator' },
          { pattern: 'x', tier: 'root' },
        ],
        read_deny: 'x',
        extra: 1,
      }),
    ).toHaveLength(5);
  });
});
