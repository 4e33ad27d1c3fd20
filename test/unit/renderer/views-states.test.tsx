// @vitest-environment jsdom
/**
 * Every view has its loading, empty and error states; the approval prompt says in words what the
 * op will do; the settings show the right stdio command; the timeline pages older history in.
 */
import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { PendingApproval, TimelineEvent } from '../../../src/shared/panel-types';
import { connectionChanged, showView } from '../../../src/renderer/actions';
import { useStore } from '../../../src/renderer/store';
import type { View } from '../../../src/renderer/store';
import { App, AuditBanner } from '../../../src/renderer/App';
import { ApprovalCard } from '../../../src/renderer/components/ApprovalCard';
import { mcpCommands, shellWord } from '../../../src/renderer/components/SettingsView';
import { useFakePanel } from './fake-api';
import type { FakeApi } from './fake-api';

let fake: FakeApi;
useFakePanel((f) => (fake = f));

const CALLS = ['listPendingApprovals', 'listChannels', 'getSettings', 'listRules', 'listProviders', 'driverStatus', 'queryTimeline', 'fleetStatus'] as const;
const VIEWS: Array<{ view: View; empty: RegExp; loading: RegExp }> = [
  { view: 'approvals', empty: /No agent is waiting for you/, loading: /Loading pending approvals/ },
  { view: 'timeline', empty: /No activity yet/, loading: /Loading history/ },
  { view: 'fleet', empty: /This hub is not in a fleet/, loading: /Loading the fleet/ },
  { view: 'channels', empty: /No drivers are loaded/, loading: /Loading channels/ },
  { view: 'providers', empty: /No providers registered/, loading: /Loading providers/ },
  { view: 'drivers', empty: /No out-of-process drivers/, loading: /Loading drivers/ },
  { view: 'settings', empty: /No standing rules/, loading: /Loading rules/ },
];

describe('empty, loading and error states', () => {
  for (const { view, empty, loading } of VIEWS) {
    it(`${view}: loading while the hub answers, then empty`, async () => {
      const gates: Array<() => void> = [];
      for (const m of CALLS) {
        const reply = fake.replies[m];
        fake.replies[m] = () => new Promise((r) => gates.push(() => r(reply)));
      }
      act(() => showView(view));
      connectionChanged('open');
      render(<App />);
      expect(screen.queryByText(loading)).not.toBeNull();
      // Answers each call as it comes (views also load on mount) until the view is empty.
      await waitFor(() => {
        for (const open of gates.splice(0)) open();
        expect(screen.queryByText(empty)).not.toBeNull();
      });
    });

    it(`${view}: a failed load shows the error with a retry`, async () => {
      for (const m of CALLS) fake.replies[m] = new Error(`uplink error [core:Unavailable]: ${m} failed — hint: retry`);
      act(() => showView(view));
      connectionChanged('open');
      render(<App />);
      const alert = await waitFor(() => {
        const box = screen.getAllByRole('alert').find((a) => a.textContent?.includes('failed — hint: retry'));
        expect(box, 'an error box').toBeTruthy();
        return box;
      });
      expect(within(alert!).queryByRole('button', { name: 'Retry' })).not.toBeNull();
    });
  }

  it('a dropped hub connection shows the banner, and reconnecting reloads every view', async () => {
    render(<App />);
    act(() => connectionChanged('reconnecting', 'retrying in 0.5 s'));
    expect(screen.getByRole('alert').textContent).toMatch(/connection was lost — reconnecting \(retrying in 0.5 s\)/);
    const before = fake.calls.length;
    act(() => connectionChanged('open'));
    await waitFor(() => expect(new Set(fake.calls.slice(before).map((c) => c.method))).toEqual(new Set(CALLS)));
    expect(screen.queryByText(/connection was lost/)).toBeNull();
  });
});

const pending = (extra: Partial<PendingApproval> = {}): PendingApproval => ({
  approval_id: 'a1',
  invocation_id: 'inv-1',
  agent: { kind: 'mcp', agent_id: 'claude-code', name: 'claude-code' },
  channel: 'desktop:win-7',
  channel_labels: ['gedit'],
  op: 'click',
  capability_id: 'desktop.click',
  args: { x: 10, y: 20 },
  provider_id: 'uplink/desktop-visual',
  interaction: 'visual_ui',
  requested_at: Date.now(),
  expires_at: Date.now() + 60_000,
  ...extra,
});

describe('what the op will do, in words', () => {
  it('uses the driver’s preview sentence when it has one', () => {
    render(
      <ApprovalCard
        approval={pending({ preview: { text: 'click at (10, 20) in gedit' } })}
        now={Date.now()}
        next
        onDecide={() => {}}
        reason=""
        onReason={() => {}}
      />,
    );
    expect(document.querySelector('.will-do')?.textContent).toBe('click at (10, 20) in gedit');
  });

  it('says it plainly when the driver gave no preview', () => {
    render(<ApprovalCard approval={pending()} now={Date.now()} next onDecide={() => {}} reason="" onReason={() => {}} />);
    expect(document.querySelector('.will-do')?.textContent).toBe(
      'claude-code asks to run the mutating op “click” on desktop:win-7 (gedit) with the arguments below, through uplink/desktop-visual (visual_ui).',
    );
  });
});

describe('the stdio command in settings', () => {
  it('a packaged app is its own stdio server; paths with spaces are quoted', () => {
    expect(mcpCommands(undefined, undefined, '/x/app.asar/bin/uplink', ['/Applications/Uplink.app/Contents/MacOS/Uplink', 'mcp']).stdio).toBe(
      'claude mcp add uplink -- /Applications/Uplink.app/Contents/MacOS/Uplink mcp',
    );
    expect(mcpCommands(undefined, undefined, undefined, ['C:\\Program Files\\Uplink\\Uplink.exe', 'mcp']).stdio).toBe(
      'claude mcp add uplink -- "C:\\Program Files\\Uplink\\Uplink.exe" mcp',
    );
    expect(shellWord('/home/a b/$x')).toBe('"/home/a b/\\$x"');
    expect(mcpCommands(undefined, undefined, '/opt/uplink/bin/uplink', undefined, '/home/a b/.uplink').stdio).toBe(
      'claude mcp add uplink -e "UPLINK_DATA_DIR=/home/a b/.uplink" -- /opt/uplink/bin/uplink mcp',
    );
  });

  it('the settings view shows the hub’s stdio command', async () => {
    fake.replies.getSettings = {
      approval_timeout_ms: 120_000,
      data_dir: '/data',
      version: '0.1.0',
      mcp_url: 'http://127.0.0.1:7420/mcp',
      mcp_token: 't0k',
      stdio_command: ['/opt/Uplink/uplink', 'mcp'],
    };
    act(() => showView('settings'));
    connectionChanged('open');
    render(<App />);
    // With the hub's data directory, so the agent's `uplink mcp` reaches this hub and its config.
    await screen.findByText('claude mcp add uplink -e UPLINK_DATA_DIR=/data -- /opt/Uplink/uplink mcp');
    // The HTTP command is shown with the token masked.
    expect(document.body.textContent).not.toContain('t0k');
  });
});

describe('a broken config.json', () => {
  it('the settings view says which file is broken and which config is in force', async () => {
    fake.replies.getSettings = {
      approval_timeout_ms: 120_000,
      data_dir: '/data',
      version: '0.1.0',
      config_error: '/data/config.json is empty (the last good config stays in use)',
    };
    act(() => showView('settings'));
    connectionChanged('open');
    render(<App />);
    await waitFor(() =>
      expect(screen.getByRole('alert').textContent).toBe('config.json is broken: /data/config.json is empty (the last good config stays in use)'),
    );
  });
});

describe('timeline history paging', () => {
  const ev = (cursor: number): TimelineEvent => ({
    id: cursor,
    at: cursor,
    type: 'event',
    kind: 'accepted',
    invocation_id: `inv-${cursor}`,
    sequence: 1,
    channel: 'tmux:%1',
    op: 'send',
    agent: { kind: 'mcp', agent_id: 'a', name: 'a' },
  });

  it('“Load older” pages in the history before the oldest row, until the start', async () => {
    fake.replies.queryTimeline = (p: { before?: number }) =>
      p.before === undefined ? { events: [ev(20), ev(21)], next_before: 20 } : { events: [ev(5), ev(6)], next_before: null };
    act(() => showView('timeline'));
    connectionChanged('open');
    render(<App />);
    fireEvent.click(await screen.findByRole('button', { name: 'Load older' }));
    await screen.findByText('Showing everything since the start of history');
    expect(fake.calls.filter((c) => c.method === 'queryTimeline').map((c) => c.params)).toContainEqual({ limit: 500, before: 20 });
    expect(useStore.getState().timeline.order).toEqual(['inv-5', 'inv-6', 'inv-20', 'inv-21']);
  });
});

describe('a decision is final', () => {
  it('a decision that loses the race with the timeout is reported once and never resent', async () => {
    fake.replies.decide = { accepted: false, message: 'uplink error [core:Rejected]: approval a1 was already decided (timeout) — hint: nothing to do' };
    fake.emit('approvalAdded', pending());
    act(() => showView('approvals'));
    render(<App />);
    const approve = screen.getByRole('button', { name: /^Approve once/ });
    fireEvent.click(approve);
    fireEvent.click(approve);
    fireEvent.doubleClick(approve);
    await waitFor(() => expect(useStore.getState().toasts.map((t) => t.text)).toEqual([expect.stringContaining('already decided (timeout)')]));
    expect(fake.calls.filter((c) => c.method === 'decide')).toHaveLength(1);
    fake.emit('approvalResolved', { approval_id: 'a1', granted: false, authorized: 'timeout' });
    await screen.findByText(/timed out: the operator did not decide in time \(auto-denied\)/);
    expect(screen.queryByRole('article')).toBeNull();
  });
});

describe('names agents and panes control are shown inert', () => {
  const hostile = 'tmux:x\u001b]0;owned\u0007\ny';
  // eslint-disable-next-line no-control-regex -- looking for raw control characters is the point
  const RAW = /[\u001b\u0007\u2028]/;

  it('channels: a channel name, label and detail with control characters are escaped', async () => {
    fake.replies.listChannels = {
      channels: [{ channel: hostile, driver: 'tmux', labels: ['lab\u2028el'], detail: { title: 'ti\u001b[2Jtle' } }],
      health: [{ driver: 'tmux', ok: true, lines: [] }],
      errors: [],
    };
    act(() => showView('channels'));
    connectionChanged('open');
    render(<App />);
    const list = await screen.findByRole('listbox', { name: 'tmux channels' });
    expect(list.textContent).toContain('tmux:x\\x1b]0;owned\\x07\\ny');
    expect(list.textContent).toContain('lab\\u2028el');
    expect(list.textContent).toContain('ti\\x1b[2Jtle');
    expect(list.textContent).not.toMatch(RAW);
  });

  it('settings: a standing rule with control characters in its channel, op and agent is escaped', async () => {
    fake.replies.listRules = [
      { rule_id: 'r1', channel: hostile, op: 'ty\u001bpe', ops: ['ty\u001bpe'], proposed: true, digest: '0'.repeat(64), agent: 'ag\u0007ent', uses: 0 },
    ];
    act(() => showView('settings'));
    connectionChanged('open');
    render(<App />);
    const row = await screen.findByText((_, el) => el?.tagName === 'TR' && (el.textContent ?? '').includes('ty\\x1bpe'));
    expect(row.textContent).toContain('tmux:x\\x1b]0;owned\\x07\\ny');
    expect(row.textContent).toContain('ag\\x07ent');
    expect(row.textContent).not.toMatch(RAW);
  });
});

describe('named agents in settings', () => {
  it('lists agents, shows a new token once, and revokes', async () => {
    const agents = [{ id: 'claude-build', created_at: '2026-11-30T10:00:00.000Z', created_by: 'alice' }];
    fake.replies.listAgents = () => agents;
    fake.replies.createAgent = (p: unknown) => {
      const name = (p as { name: string }).name;
      agents.push({ id: name, created_at: '2026-11-30T11:00:00.000Z', created_by: 'alice' });
      return { id: name, token: 'tok-shown-once' };
    };
    fake.replies.revokeAgent = (p: unknown) => {
      Object.assign(
        agents.find((a) => a.id === (p as { name: string }).name)!,
        { revoked_at: '2026-11-30T12:00:00.000Z' },
      );
      return { revoked: true };
    };
    act(() => showView('settings'));
    connectionChanged('open');
    render(<App />);
    const table = await screen.findByRole('table', { name: 'Agents' });
    await within(table).findByText('claude-build');
    fireEvent.change(screen.getByLabelText('New agent'), { target: { value: 'reviewer' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create' }));
    const shown = await waitFor(() => {
      const status = screen.getAllByRole('status').find((el) => el.textContent?.includes('Agent reviewer created'));
      expect(status).toBeDefined();
      return status!;
    });
    expect(fake.calls.filter((c) => c.method === 'createAgent').map((c) => c.params)).toEqual([{ name: 'reviewer' }]);
    expect(shown.textContent).toContain('tok-shown-once');
    fireEvent.click(within(shown).getByRole('button', { name: 'Done' }));
    expect(screen.queryByText(/tok-shown-once/)).toBeNull();
    const row = (await within(screen.getByRole('table', { name: 'Agents' })).findByText('reviewer')).closest('tr')!;
    fireEvent.click(within(row as HTMLElement).getByRole('button', { name: 'Revoke' }));
    await waitFor(() => expect(row.textContent).toContain('revoked'));
    expect(fake.calls.filter((c) => c.method === 'revokeAgent').map((c) => c.params)).toEqual([{ name: 'reviewer' }]);
    expect(within(row as HTMLElement).queryByRole('button', { name: 'Revoke' })).toBeNull();
  });
});

describe('a high-risk tier asks for confirmation', () => {
  const tiers = [
    { name: 'observer', description: 'read only', risk: 'low' },
    { name: 'operator', description: 'type and benign keys', risk: 'medium' },
    { name: 'godmode', description: 'any key chord, C-c included', risk: 'high' },
  ];
  const channel = { channel: 'tmux:%3', driver: 'tmux', labels: ['codex'], detail: {}, tier: 'observer', tiers };

  it('choosing godmode grants nothing until the operator confirms; a low-risk tier is set at once', async () => {
    fake.replies.listChannels = { channels: [channel], health: [{ driver: 'tmux', ok: true, lines: [] }], errors: [] };
    fake.replies.describeChannel = { channel, ops: [] };
    fake.replies.previewChannel = { text: '' };
    fake.replies.setTier = (p: unknown) => p;
    act(() => showView('channels'));
    connectionChanged('open');
    render(<App />);
    fireEvent.click(await screen.findByText('tmux:%3'));
    const setTiers = () => fake.calls.filter((c) => c.method === 'setTier').map((c) => c.params);
    fireEvent.change(await screen.findByLabelText(/^Tier/), { target: { value: 'godmode' } });
    const confirm = await screen.findByRole('alertdialog');
    expect(setTiers()).toEqual([]);
    expect(confirm.textContent).toContain('any key chord, C-c included');
    fireEvent.click(within(confirm).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('alertdialog')).toBeNull();
    expect(setTiers()).toEqual([]);
    fireEvent.change(screen.getByLabelText(/^Tier/), { target: { value: 'godmode' } });
    fireEvent.click(within(screen.getByRole('alertdialog')).getByRole('button', { name: /Grant godmode/ }));
    await waitFor(() => expect(setTiers()).toEqual([{ channel: 'tmux:%3', tier: 'godmode' }]));
    fireEvent.change(screen.getByLabelText(/^Tier/), { target: { value: 'operator' } });
    await waitFor(() =>
      expect(setTiers()).toEqual([
        { channel: 'tmux:%3', tier: 'godmode' },
        { channel: 'tmux:%3', tier: 'operator' },
      ]),
    );
  });
});

describe('an op result carrying an image', () => {
  const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC';
  const channel = { channel: 'desktop:0x400007', driver: 'desktop', labels: ['gedit'], detail: {} };
  const screenshot = {
    op: 'screenshot',
    summary: 'PNG of the window',
    mutating: false,
    params_schema: { type: 'object', properties: {} },
    result_schema: { type: 'object' },
  };

  it('shows a screenshot as an image, not as base64 text, and the other fields as text', async () => {
    fake.replies.listChannels = { channels: [channel], health: [{ driver: 'desktop', ok: true, lines: [] }], errors: [] };
    fake.replies.describeChannel = { channel, ops: [screenshot] };
    fake.replies.previewChannel = { error: 'no preview' };
    fake.replies.runOp = {
      ok: true,
      output: { png_base64: PNG, width: 1, height: 1, warnings: ['the capture is blank'], note: 'iVBORw0KGgo but not base64!' },
    };
    act(() => showView('channels'));
    connectionChanged('open');
    render(<App />);
    fireEvent.click(await screen.findByText('desktop:0x400007'));
    fireEvent.click(await screen.findByText('screenshot'));
    fireEvent.click(screen.getByRole('button', { name: 'Run screenshot' }));
    const img = await screen.findByRole('img', { name: 'screenshot png_base64 of desktop:0x400007' });
    expect(img.getAttribute('src')).toBe(`data:image/png;base64,${PNG}`);
    const result = img.closest('.result')!;
    expect(result.textContent).not.toContain(PNG);
    expect(result.textContent).toContain('(image/png, 0 KB, shown above)');
    expect(result.textContent).toContain('the capture is blank');
    // Only real base64 becomes an image.
    expect(result.textContent).toContain('iVBORw0KGgo but not base64!');
    expect(result.querySelectorAll('img')).toHaveLength(1);
  });
});

describe('the audit banner', () => {
  it('shows the hub’s own reason and hint, not a disk-space guess (a deleted audit file needs a restart)', () => {
    const error =
      'the audit log cannot be written (the audit file /data/audit.sqlite was deleted while the hub runs) — hint: restart the hub: it opens a new audit';
    useStore.setState((s) => ({ connection: { ...s.connection, status: { ...(s.connection.status ?? {}), audit_error: error } as never } }));
    render(<AuditBanner />);
    const banner = screen.getByRole('alert');
    expect(banner.textContent).toContain('restart the hub');
    expect(banner.textContent).not.toContain('Free disk space');
  });
});
