/** A prompt as it travels the fleet: what only its own hub's panel may use stays home. */
import { describe, expect, it } from 'vitest';
import { toFleetPrompt } from '../../../src/main/hub/fleet/prompts';
import { decode, encode } from '../../../src/main/hub/fleet/messages';
import type { PendingApproval } from '../../../src/main/hub/types';

const prompt: PendingApproval = {
  approval_id: 'appr-1',
  invocation_id: 'inv-1',
  agent: { kind: 'mcp', agent_id: 'builder', name: 'claude-code', session: 's1' },
  channel: 'tmux:%3',
  channel_labels: ['codex'],
  op: 'type',
  capability_id: 'tmux.type',
  args: { text: '•••• (sensitive, 6 chars)', sensitive: true },
  sensitive: true,
  redacted_args: ['text'],
  provider_id: 'tmux',
  interaction: 'typed',
  requested_at: 1,
  expires_at: 2,
};

describe('toFleetPrompt', () => {
  it('leaves the redacted arg names home (another hub can only approve once or deny), so peers accept the prompt', () => {
    const out = toFleetPrompt(prompt);
    expect(out).not.toHaveProperty('redacted_args');
    expect(decode('prompt', encode({ v: 1, hub: 'b', type: 'added', approval: out }))).toMatchObject({ approval: { approval_id: 'appr-1', sensitive: true } });
  });
});
