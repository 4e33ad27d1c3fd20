/**
 * The demo's story goes on whatever the operator decides: a denied step, a failed one, and a type
 * whose read went stale while the prompt waited (read again, ask once more) — told through a
 * stand-in agent that answers tool calls the way the hub's MCP server does.
 */
import { describe, expect, it } from 'vitest';
import { STORY, tellStory } from '../../../src/main/edges/demo/story';
import type { StoryAgent, StoryHooks, ToolAnswer } from '../../../src/main/edges/demo/story';
import type { DemoStep } from '../../../src/shared/panel-types';

const ok = (json: unknown): ToolAnswer => ({ ok: true, outcome: 'succeeded', text: JSON.stringify(json), json });
const refused = (outcome: string, text: string): ToolAnswer => ({ ok: false, outcome, text });

const CHANNELS = {
  channels: [
    { channel: 'tmux:%0', labels: ['builder'] },
    { channel: 'tmux:%1', labels: ['reviewer'] },
    { channel: 'desktop:0x1', labels: [], detail: { pid: 42, title: 'Uplink Demo - Sign-up', interactions: ['semantic_ui', 'visual_ui'] } },
  ],
};

/** Records every call; `act` decides each channel_act in order. */
function standIn(act: (n: number, args: Record<string, unknown>) => ToolAnswer) {
  const calls: Array<{ name: string; args: Record<string, unknown> }> = [];
  let acts = 0;
  const agent: StoryAgent = {
    async call(name, args) {
      calls.push({ name, args });
      if (name === 'channel_list') return ok(CHANNELS);
      if (name === 'channel_observe') return ok(args.op === 'observe' ? { geometry: { x: 0, y: 0, width: 480, height: 420 } } : { text: '$ ' });
      return act(acts++, args);
    },
  };
  return { agent, calls };
}

function hooks() {
  const steps: DemoStep[] = [];
  const log: string[] = [];
  const h: StoryHooks = {
    step: (s) => steps.push({ ...s, total: STORY.length, state: 'running' }),
    panelAttached: async () => undefined,
    log: (l) => log.push(l),
    signal: new AbortController().signal,
  };
  return { h, steps, log };
}

describe('the demo story', () => {
  it('asks for every act of the story in order, through semantic_ui for the form and visual_ui for the sketch pad', async () => {
    const { agent, calls } = standIn(() => ok({}));
    const { h, steps } = hooks();
    const result = await tellStory(agent, 42, h);
    const acts = calls
      .filter((c) => c.name === 'channel_act')
      .map((c) => `${String(c.args.channel)} ${String(c.args.op)} ${String(c.args.interaction ?? '')}`.trim());
    expect(acts).toEqual([
      'tmux:%0 type',
      'tmux:%1 ask',
      'desktop:0x1 set-text semantic_ui',
      'desktop:0x1 set-text semantic_ui',
      'desktop:0x1 activate semantic_ui',
      'desktop:0x1 click visual_ui',
      'tmux:%0 type',
    ]);
    expect(result.acts).toHaveLength(7);
    expect(steps.at(-1)).toMatchObject({ step: 8, window_channel: 'desktop:0x1' });
    // Every type comes right after a read of the same pane (the driver's read-first guard).
    calls.forEach((c, i) => {
      if (c.name === 'channel_act' && c.args.op === 'type')
        expect(calls[i - 1]).toMatchObject({ name: 'channel_observe', args: { channel: c.args.channel, op: 'read' } });
    });
  });

  it('goes on after the operator denies any step, and says so in the summary', async () => {
    const { agent } = standIn(() => refused('denied', 'uplink error [tmux:Rejected]: denied by the operator — hint: ask the operator'));
    const { h, steps, log } = hooks();
    const result = await tellStory(agent, 42, h);
    expect(result.acts.map((a) => a.outcome)).toEqual(Array(7).fill('denied'));
    expect(steps.at(-1)?.step).toBe(8);
    expect(steps.at(-1)?.summary).toContain('force-push from tmux:%0 (builder): denied');
    expect(log).toContain('  the operator said no; the agent moves on');
  });

  it('a type whose read went stale while the prompt waited is read again and asked once more, and the strip says why', async () => {
    const stale = refused('failed', 'uplink error [tmux:Rejected]: no recent read of %0 — hint: read first: invoke the read op on tmux:%0, then retry');
    const { agent, calls } = standIn((n) => (n === 0 ? stale : ok({})));
    const { h, steps } = hooks();
    const result = await tellStory(agent, 42, h);
    expect(result.acts.slice(0, 2)).toEqual([
      { what: 'type a command in tmux:%0 (builder)', outcome: 'failed' },
      { what: 'type a command in tmux:%0 (builder)', outcome: 'succeeded' },
    ]);
    const typed = calls.findIndex((c) => c.name === 'channel_act');
    expect(calls.slice(typed + 1, typed + 3)).toMatchObject([
      { name: 'channel_observe', args: { op: 'read' } },
      { name: 'channel_act', args: { op: 'type' } },
    ]);
    expect(steps.some((s) => s.step === 3 && s.why.includes('went stale'))).toBe(true);
  });

  it('names the panes on the strip as the prompts do: the address the agent calls, then its label', async () => {
    const { agent, calls } = standIn(() => ok({}));
    const { h, steps } = hooks();
    await tellStory(agent, 42, h);
    const strip = steps.map((st) => `${st.why} ${st.look} ${st.summary ?? ''}`).join('\n');
    expect(strip).not.toMatch(/tmux:(builder|reviewer)/);
    expect(steps.find((st) => st.step === 3)?.look).toBe('Approvals: "type" on tmux:%0 (builder) — Approve once.');
    expect(steps.find((st) => st.step === 4)?.look).toContain('"ask" on tmux:%1 (reviewer)');
    expect(steps.find((st) => st.step === 7)?.look).toContain('on tmux:%0 (builder) — Deny.');
    // …and the prompts are raised on that very address.
    expect(calls.filter((c) => c.name === 'channel_act' && String(c.args.channel).startsWith('tmux:')).map((c) => c.args.channel)).toEqual([
      'tmux:%0',
      'tmux:%1',
      'tmux:%0',
    ]);
  });

  it('lingers on the steps that ask nothing (discover, read) before the first prompt', async () => {
    const order: string[] = [];
    const { agent } = standIn(() => ok({}));
    const { h } = hooks();
    const step = h.step;
    h.step = (st) => (order.push(`step ${st.step}`), step(st));
    h.dwell = async () => void order.push('dwell');
    await tellStory(agent, 42, h);
    expect(order.slice(0, order.indexOf('step 3'))).toEqual(['step 1', 'step 1', 'dwell', 'step 2', 'dwell']);
  });
});
