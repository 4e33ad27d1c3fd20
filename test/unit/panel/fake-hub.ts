/**
 * An in-memory Hub for the panel edge's unit tests (transport, auth, validation). The real hub is
 * exercised by the e2e tests; here we need exact control over approvals and audit entries.
 */
import type { Hub } from '../../../src/main/hub/hub';
import type { ApprovalEvent, AuditEntry, PendingApproval, StandingRuleStatus } from '../../../src/main/hub/types';
import type { AgentSummary } from '../../../src/main/hub/credentials/agents';
import { DriverError } from '../../../src/main/drivers/contract';
import type { TierSpec } from '../../../src/main/drivers/contract';

/** The fake driver's own tiers: not tmux's, so a panel that shows tmux's proves nothing. */
export const FAKE_TIERS: TierSpec[] = [
  { name: 'observer', description: 'looks only', risk: 'low' },
  { name: 'pilot', description: 'types and presses anything', risk: 'high' },
];

export interface FakeHub extends Hub {
  attached: number;
  entries: AuditEntry[];
  pending: PendingApproval[];
  rules: StandingRuleStatus[];
  agents: AgentSummary[];
  decisions: Array<{ id: string; kind: string; reason?: string; by: string }>;
  emitEntry(e: AuditEntry): void;
  addApproval(a: PendingApproval): void;
}

export function createFakeHub(): FakeHub {
  const entryListeners = new Set<(e: AuditEntry) => void>();
  const approvalListeners = new Set<(e: ApprovalEvent) => void>();
  let timeout = 120_000;
  const hub: FakeHub = {
    dataDir: '/tmp/uplink-fake',
    attached: 0,
    entries: [],
    pending: [],
    rules: [],
    agents: [],
    decisions: [],
    emitEntry(e) {
      hub.entries.push(e);
      for (const l of entryListeners) l(e);
    },
    addApproval(a) {
      hub.pending.push(a);
      for (const l of approvalListeners) l({ type: 'added', approval: a });
    },
    async overview() {
      return [
        {
          driver: 'tmux',
          info: { id: 'tmux', kind: 'both', summary: 'tmux panes', tiers: FAKE_TIERS },
          health: { driver: 'tmux', ok: true, lines: ['server running'] },
          channels: [{ channel: 'tmux:%1', labels: ['codex'], detail: { tier: 'observer', command: 'bash' } }],
        },
      ];
    },
    drivers: () => [{ id: 'tmux', kind: 'both', summary: 'tmux panes', tiers: FAKE_TIERS }],
    async listChannels() {
      return [{ channel: 'tmux:%1', labels: ['codex'], detail: {} }];
    },
    async ops() {
      return [];
    },
    async lookAt() {
      return undefined;
    },
    async describe(channel) {
      if (channel !== 'tmux:%1') throw new DriverError('NotFound', `no channel ${channel}`, { hint: 'list channels' });
      return { channel: { channel, labels: ['codex'], detail: { tier: 'observer' } }, ops: [] };
    },
    async doctor() {
      return {
        ok: true,
        drivers: [],
        config: { ok: true, path: '' },
        audit: { ok: true, path: '' },
        agents: { ok: true, path: '' },
        panels_attached: hub.attached,
      };
    },
    async driverReports() {
      return [];
    },
    async invoke(_c, op, args) {
      return { op, args: args ?? null };
    },
    async send() {
      return { delivered: true, correlation_id: 'abcd1234', injected_at: new Date(0).toISOString() };
    },
    async recv() {
      return { items: [], next_cursor: 0 };
    },
    async messagingDrivers() {
      return ['test'];
    },
    recordRejected: (_request, error) => error,
    subscribe(listener) {
      entryListeners.add(listener);
      return () => entryListeners.delete(listener);
    },
    auditFailure: () => undefined,
    onAuditChange: () => () => undefined,
    queryAudit(q) {
      let list = hub.entries.filter((e) => (q.invocation_id ? e.invocation_id === q.invocation_id : true));
      if (q.before !== undefined) list = list.filter((e) => e.id < q.before!);
      if (q.after !== undefined) list = list.filter((e) => e.id > q.after!);
      const limit = q.limit ?? 200;
      if (q.after !== undefined) {
        const page = list.slice(0, limit);
        return { entries: page, next_cursor: page.length === limit ? page[page.length - 1]!.id : undefined };
      }
      const page = list.slice(-limit).reverse();
      return { entries: page, next_cursor: list.length > limit ? page[page.length - 1]!.id : undefined };
    },
    attachPanel() {
      hub.attached++;
      let done = false;
      return () => {
        if (!done) hub.attached--;
        done = true;
      };
    },
    panelsAttached: () => hub.attached,
    pendingApprovals: () => [...hub.pending],
    configStatus: () => ({ ok: true, path: '/data/config.json' }),
    onConfigChange: () => () => undefined,
    onAuditCheckpoint: () => () => undefined,
    revealApprovalArgs(id) {
      const p = hub.pending.find((a) => a.approval_id === id);
      if (!p) throw new DriverError('NotFound', `no pending approval ${id}`, { hint: 'only a pending prompt can be revealed' });
      return p.args;
    },
    async refreshApproval(id) {
      const p = hub.pending.find((a) => a.approval_id === id);
      if (!p) throw new DriverError('NotFound', `no pending approval ${id}`, { hint: 'only a pending prompt can be refreshed' });
      return p;
    },
    subscribeApprovals(listener) {
      approvalListeners.add(listener);
      return () => approvalListeners.delete(listener);
    },
    async decide(id, decision) {
      const i = hub.pending.findIndex((p) => p.approval_id === id);
      if (i < 0) throw new DriverError('Rejected', `approval ${id} was already decided`, { hint: 'nothing to do' });
      hub.pending.splice(i, 1);
      hub.decisions.push({ id, kind: decision.kind, reason: decision.reason, by: decision.by });
      const granted = decision.kind !== 'deny';
      for (const l of approvalListeners) l({ type: 'resolved', approval_id: id, granted, authorized: 'operator', by: decision.by, reason: decision.reason });
      if (decision.kind === 'always') {
        hub.rules.push({ id: 'r1', channel: 'tmux:codex', op: 'send', uses: 0, proposed: false, digest: '0'.repeat(64) });
        return { approval_id: id, granted, rule_id: 'r1' };
      }
      return { approval_id: id, granted };
    },
    async denyAll(agentId, by, reason) {
      const ids = hub.pending.filter((p) => p.agent.agent_id === agentId).map((p) => p.approval_id);
      for (const id of ids) await this.decide(id, { kind: 'deny', by, ...(reason ? { reason } : {}) });
      return ids;
    },
    listRules: () => hub.rules,
    async revokeRule(id) {
      const i = hub.rules.findIndex((r) => r.id === id);
      if (i < 0) throw new DriverError('NotFound', `no rule ${id}`);
      hub.rules.splice(i, 1);
    },
    async confirmRule(id) {
      const r = hub.rules.find((x) => x.id === id);
      if (!r) throw new DriverError('NotFound', `no rule ${id}`);
      r.proposed = false;
    },
    async updateRule(id, scope) {
      const r = hub.rules.find((x) => x.id === id);
      if (!r) throw new DriverError('NotFound', `no rule ${id}`);
      Object.assign(r, { channel: scope.channel, op: scope.ops.length === 1 ? scope.ops[0] : scope.ops, agent: scope.agent });
    },
    listSessionGrants: () => [],
    async revokeSessionGrant(id) {
      throw new DriverError('NotFound', `no session grant ${id}`);
    },
    approvalTimeoutMs: () => timeout,
    async setApprovalTimeoutMs(ms) {
      timeout = ms;
    },
    listAgents: () => hub.agents,
    async createAgent(name, by) {
      hub.agents.push({ id: name, created_at: new Date(0).toISOString(), created_by: by });
      return { id: name, token: `token-of-${name}` };
    },
    async revokeAgent(name) {
      const a = hub.agents.find((x) => x.id === name);
      if (!a) throw new DriverError('NotFound', `no agent "${name}"`);
      a.revoked_at = new Date(0).toISOString();
    },
    authenticateAgent: () => undefined,
    async setTier() {},
    driverStatus: async () => [],
    driverTrace: () => [],
    trustDriver: async () => {
      throw new DriverError('NotFound', 'no external driver');
    },
    restartDriver: async () => {
      throw new DriverError('NotFound', 'no external driver');
    },
    providers: () => [{ provider_id: 'uplink/tmux', version: '1.0.0', driver: 'tmux', interaction: 'typed', capabilities: ['tmux.read', 'tmux.send'] }],
    async explainSelection() {
      const offer = {
        provider: { id: 'uplink/tmux', version: '1.0.0', name: 'tmux', description: 'tmux panes' },
        capability: {
          id: 'tmux.send',
          version: '1.0.0',
          title: 'send',
          description: 'send a message',
          input_schema: {},
          output_schema: {},
          safety: 'mutating' as const,
        },
        interaction: 'typed' as const,
      };
      return { selected: offer, candidates: [{ offer, matched: true, reason: 'the only offer' }] };
    },
    // A hub in no fleet: the panel shows no Fleet view.
    fleetStatus: () => ({ member: false }),
    fleetHistory: () => ({ entries: [] }),
    subscribeFleet: () => () => undefined,
    async close() {},
  };
  return hub;
}

/** A pending approval for tests. */
export function approval(id: string, over: Partial<PendingApproval> = {}): PendingApproval {
  return {
    approval_id: id,
    invocation_id: `inv-${id}`,
    agent: { kind: 'mcp', agent_id: 'default', name: 'claude-code' },
    channel: 'tmux:%1',
    channel_labels: ['codex'],
    op: 'send',
    capability_id: 'tmux.send',
    args: { message: 'hello there', reply_hint: 'full' },
    provider_id: 'uplink/tmux',
    interaction: 'typed',
    requested_at: 1000,
    expires_at: 121_000,
    ...over,
  };
}
