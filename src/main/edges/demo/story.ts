/**
 * The demo's story, played by a scripted agent: an MCP client that speaks to the hub over
 * Streamable HTTP with the data directory's agent token, like any agent. It never gets more than
 * an agent gets; the presenter strip is written by the demo process beside it (operator side).
 * The agent waits at each prompt for as long as the operator takes, and goes on whatever is decided.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { DemoStep } from '../../../shared/panel-types';
import { DEMO_WINDOW_TITLE, PANES } from './stage';

/**
 * One step of the story as the presenter strip and `--list` show it. `{builder}` and `{reviewer}`
 * stand for the panes as the prompts name them (`namePanes`).
 */
export interface StoryStep {
  title: string;
  why: string;
  look: string;
}

/** How the story names its two panes: as a prompt shows a channel, `tmux:%0 (builder)`. */
export interface PaneNames {
  builder: string;
  reviewer: string;
}

/** `text` with the panes named (`{builder}`, `{reviewer}`). */
export function namePanes(text: string, names: PaneNames): string {
  return text.replace(/\{(builder|reviewer)\}/g, (_, pane: keyof PaneNames) => names[pane]);
}

/** A channel as a prompt names it: its address, then its labels in brackets. */
export function promptName(channel: string, labels: readonly string[]): string {
  return labels.length ? `${channel} (${labels.join(', ')})` : channel;
}

/** demo/app.py's layout: the sketch pad (160 px high) sits on the window's 12 px bottom border. */
const PAD_MIDDLE_FROM_BOTTOM = 12 + 160 / 2;

/** The text the agent types that the operator is meant to refuse (harmless if approved: no repository there). */
export const REFUSED_COMMAND = 'git push --force origin main';

export const STORY: readonly StoryStep[] = [
  {
    title: 'Discover the channels',
    why: 'The agent asks Uplink what it can reach: two tmux panes (builder, reviewer) and the demo window. It sees nothing Uplink does not offer.',
    look: 'Channels: the panes and the window, each a channel.',
  },
  {
    title: 'Read the builder pane',
    why: 'Reading changes nothing, so it runs at once — and is still recorded on the timeline.',
    look: 'Timeline: a read-only call that succeeded without a prompt.',
  },
  {
    title: 'Run a command in the builder pane',
    why: 'Typing into a terminal changes things: the agent waits for you. The prompt shows exactly what it will type.',
    look: 'Approvals: "type" on {builder} — Approve once.',
  },
  {
    title: 'Ask the reviewer agent',
    why: 'Agents talk to each other through Uplink too: the message is delivered, verified, approved and audited like any action.',
    look: 'Approvals: "ask" on {reviewer} — Approve once. The answer comes back to the agent.',
  },
  {
    title: 'Fill in the sign-up form (semantic_ui)',
    why: 'The form is exposed through the accessibility tree, so Uplink sets fields and presses buttons by name — no pixel guessing.',
    look: 'Approvals: "set-text" Name, "set-text" Email, then "activate" Save — Approve once each.',
  },
  {
    title: 'Click in the sketch pad (visual_ui)',
    why: 'The canvas has no accessibility tree, so selection falls to visual_ui: a click at window pixels, with a screenshot in the prompt marking the spot.',
    look: 'Approvals: "click" on the demo window, served by uplink/desktop-visual — Approve once.',
  },
  {
    title: 'Try a force-push (refuse it)',
    why: 'You stay in charge: the agent tries something risky. Deny it — the agent is told no, and carries on.',
    look: `Approvals: "type ${REFUSED_COMMAND}" on {builder} — Deny.`,
  },
  {
    title: 'Summary',
    why: 'Everything the agent did, and everything you decided, is in the audit log: the timeline here, `uplink log` in a terminal.',
    look: 'Timeline: every call with its outcome and who approved it.',
  },
];

/** What the presenter hears from the story. */
export interface StoryHooks {
  step(step: Omit<DemoStep, 'total' | 'state'>): void;
  /** Resolves once a panel is attached: with none, a mutating call is refused at once. */
  panelAttached(): Promise<void>;
  /**
   * After a step that asks the operator nothing: how long it stays on the strip before the next
   * one (without it, the first steps flash past before the presenter has read them).
   */
  dwell?(): Promise<void>;
  log(line: string): void;
  signal: AbortSignal;
}

/** A tool call's result as the agent reads it. */
export interface ToolAnswer {
  ok: boolean;
  outcome: string;
  text: string;
  json?: unknown;
}

/** What the story needs of its agent: tool calls, answered as an MCP client reads them. */
export interface StoryAgent {
  call(name: string, args: Record<string, unknown>): Promise<ToolAnswer>;
}

/** The agent's MCP connection. */
class Agent implements StoryAgent {
  readonly #client = new Client({ name: 'uplink-demo-agent', version: '1.0.0' });
  readonly #signal: AbortSignal;

  constructor(signal: AbortSignal) {
    this.#signal = signal;
  }

  async connect(mcpUrl: string, token: string): Promise<void> {
    await this.#client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  }

  /** Calls a tool; a prompt may take as long as the operator takes, so no client-side timeout. */
  async call(name: string, args: Record<string, unknown>): Promise<ToolAnswer> {
    // One controller per call: the SDK adds a listener to the signal it is given and keeps it.
    const call = new AbortController();
    const abort = (): void => call.abort();
    this.#signal.addEventListener('abort', abort, { once: true });
    const result = (await this.#client
      .callTool({ name, arguments: args }, undefined, { timeout: 86_400_000, signal: call.signal })
      .finally(() => this.#signal.removeEventListener('abort', abort))) as {
      isError?: boolean;
      content?: Array<{ type: string; text?: string }>;
      structuredContent?: unknown;
      _meta?: Record<string, unknown>;
    };
    const text = (result.content ?? [])
      .filter((c) => c.type === 'text')
      .map((c) => c.text ?? '')
      .join('\n');
    let json: unknown = result.structuredContent;
    if (json === undefined && !result.isError) {
      try {
        json = JSON.parse(text);
      } catch {
        // a plain line
      }
    }
    const outcome = typeof result._meta?.['uplink/outcome'] === 'string' ? (result._meta['uplink/outcome'] as string) : result.isError ? 'failed' : 'succeeded';
    return { ok: !result.isError, outcome, text, json };
  }

  close(): Promise<void> {
    return this.#client.close();
  }
}

interface ChannelInfo {
  channel: string;
  labels: string[];
  detail?: { title?: string; interactions?: string[]; pid?: number };
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/** The outcome words of the story's acts, for the summary. */
export interface StoryResult {
  acts: Array<{ what: string; outcome: string }>;
}

/** Plays the story as an MCP client of the hub at `mcpUrl`; resolves with what happened to each act. */
export async function playStory(mcpUrl: string, token: string, appPid: number, hooks: StoryHooks): Promise<StoryResult> {
  const agent = new Agent(hooks.signal);
  await agent.connect(mcpUrl, token);
  try {
    return await tellStory(agent, appPid, hooks);
  } finally {
    await agent.close().catch(() => undefined);
  }
}

/** The story itself, told through `agent`: it goes on whatever the operator decides. */
export async function tellStory(agent: StoryAgent, appPid: number, hooks: StoryHooks): Promise<StoryResult> {
  const acts: StoryResult['acts'] = [];
  let windowChannel: string | undefined;
  // Until the agent has listed the channels, the panes go by their labels.
  let names: PaneNames = { builder: `tmux:${PANES.builder}`, reviewer: `tmux:${PANES.reviewer}` };
  const show = (index: number, extra: { summary?: string } = {}, quiet = false): void => {
    const s = STORY[index]!;
    hooks.step({
      step: index + 1,
      title: s.title,
      why: namePanes(s.why, names),
      look: namePanes(s.look, names),
      ...(windowChannel ? { window_channel: windowChannel } : {}),
      ...extra,
    });
    if (!quiet) hooks.log(`step ${index + 1}/${STORY.length}: ${s.title}`);
  };
  /** A mutating call: waits for a panel first, then for the operator; the story goes on either way. */
  const act = async (what: string, args: Record<string, unknown>): Promise<ToolAnswer> => {
    await hooks.panelAttached();
    const answer = await agent.call('channel_act', args);
    acts.push({ what, outcome: answer.outcome });
    hooks.log(`  ${what}: ${answer.outcome}${answer.ok ? '' : ` — ${answer.text}`}`);
    return answer;
  };
  /**
   * Types into a pane after reading it (the tmux driver wants a read within a minute of typing).
   * A presenter who talks longer than that before approving gets the guard's refusal: the agent
   * reads again and asks once more, and the strip says why.
   */
  const typeInPane = async (index: number, what: string, channel: string, text: string): Promise<ToolAnswer> => {
    await agent.call('channel_observe', { channel, op: 'read', args: { lines: 20 } });
    const answer = await act(what, { channel, op: 'type', args: { text, enter: true } });
    if (answer.ok || !answer.text.includes('read first')) return answer;
    const s = STORY[index]!;
    hooks.step({
      step: index + 1,
      title: s.title,
      why: 'Typing needs a read of the pane within the last minute, and that one went stale while the prompt waited: the agent read the pane again and asks once more.',
      look: namePanes(s.look, names),
      ...(windowChannel ? { window_channel: windowChannel } : {}),
    });
    hooks.log('  the read went stale while the prompt waited; the agent reads again and asks once more');
    await agent.call('channel_observe', { channel, op: 'read', args: { lines: 20 } });
    return act(what, { channel, op: 'type', args: { text, enter: true } });
  };
  // 1. Discover: the panes by label, the demo window once AT-SPI has registered it.
  show(0);
  let channels: ChannelInfo[] = [];
  const deadline = Date.now() + 30_000;
  for (;;) {
    const listed = await agent.call('channel_list', {});
    channels = ((listed.json as { channels?: ChannelInfo[] } | undefined)?.channels ?? []) as ChannelInfo[];
    windowChannel = channels.find((c) => c.detail?.pid === appPid && (c.detail.interactions ?? []).includes('semantic_ui'))?.channel;
    if (windowChannel || Date.now() > deadline || hooks.signal.aborted) break;
    await sleep(250, hooks.signal);
  }
  const pane = (label: string): ChannelInfo => channels.find((c) => c.labels.includes(label)) ?? { channel: `tmux:${label}`, labels: [] };
  const builder = pane(PANES.builder);
  const reviewer = pane(PANES.reviewer);
  // The strip names each pane as its prompts will: the address the agent calls, then its labels.
  names = { builder: promptName(builder.channel, builder.labels), reviewer: promptName(reviewer.channel, reviewer.labels) };
  windowChannel ??= channels.find((c) => c.detail?.title === DEMO_WINDOW_TITLE)?.channel;
  show(0, {}, true);
  await hooks.dwell?.();

  // 2. Read (the read also counts as the "read first" the tmux driver asks before typing).
  show(1);
  await agent.call('channel_observe', { channel: builder.channel, op: 'read', args: { lines: 20 } });
  await hooks.dwell?.();

  // 3. Type a command.
  show(2);
  await typeInPane(2, `type a command in ${names.builder}`, builder.channel, 'echo "hello from the demo agent"; ls');

  // 4. Ask the reviewer.
  show(3);
  const asked = await act(`ask ${names.reviewer}`, {
    channel: reviewer.channel,
    op: 'ask',
    args: { message: 'I am about to ship the sign-up form. Any objections?', quiet_ms: 800, timeout_ms: 15_000 },
  });
  const transcript = (asked.json as { transcript?: string } | undefined)?.transcript;
  if (transcript) hooks.log(`  the reviewer said: ${transcript.trim().split('\n').pop()}`);

  // 5. The form, through the accessibility tree.
  show(4);
  if (windowChannel) {
    await act('set Name (semantic_ui)', {
      channel: windowChannel,
      op: 'set-text',
      args: { path: '//text[Name]', text: 'Ada Lovelace' },
      interaction: 'semantic_ui',
    });
    await act('set Email (semantic_ui)', {
      channel: windowChannel,
      op: 'set-text',
      args: { path: '//text[Email]', text: 'ada@example.com' },
      interaction: 'semantic_ui',
    });
    await act('press Save (semantic_ui)', { channel: windowChannel, op: 'activate', args: { path: '//push button[Save]' }, interaction: 'semantic_ui' });
  } else hooks.log('  the demo window never appeared as an accessible channel; skipping the form');

  // 6. The canvas, by pixels: its middle, from the window's own geometry.
  show(5);
  if (windowChannel) {
    const seen = await agent.call('channel_observe', { channel: windowChannel, op: 'observe', args: {} });
    const geometry = (seen.json as { geometry?: { width: number; height: number } } | undefined)?.geometry ?? { width: 480, height: 420 };
    await act('click the sketch pad (visual_ui)', {
      channel: windowChannel,
      op: 'click',
      args: { x: Math.round(geometry.width / 2), y: geometry.height - PAD_MIDDLE_FROM_BOTTOM },
      interaction: 'visual_ui',
    });
  }

  // 7. Something the operator should refuse.
  show(6);
  const risky = await typeInPane(6, `force-push from ${names.builder}`, builder.channel, REFUSED_COMMAND);
  hooks.log(risky.outcome === 'denied' ? '  the operator said no; the agent moves on' : `  (${risky.outcome}: nothing to push here anyway)`);

  // 8. Summary.
  const summary = acts.map((a) => `${a.what}: ${a.outcome}`).join('; ');
  show(7, { summary });
  return { acts };
}
