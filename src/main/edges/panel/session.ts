/**
 * One connected panel (a WebSocket or the Electron window): the PanelApi's handlers over the Hub,
 * and the hub's streams forwarded as panel events. While a session is open it counts as an
 * attached panel, so mutating requests ask the operator instead of being denied.
 */
import { driverOfChannel, OPERATOR_AGENT_ID } from '../../hub';
import { defaultArgsFor } from '../../hub';
import type { AgentIdentity, ChannelEntry, DriverInfo, Hub } from '../../hub';
import type { Disposer, PanelEventName, PanelEvents, PanelHandlers } from '../../../shared/panel-api';
import type { ChannelList, DemoStep, PanelChannel, PanelSettings } from '../../../shared/panel-types';
import type { JsonValue } from '../../../shared/wire';
import { declaredApproval, toFleetEntry, toFleetView, toInvocationDetail, toPanelExplanation, toPanelRule, toTimelineEvent } from './mapping';
import { renderError } from './errors';
import { searchTimeline } from './search';
import { clipName } from '../../../shared/escape';

/** Facts about the host the settings view shows. */
export interface PanelHostInfo {
  /** e.g. `http://127.0.0.1:7345/mcp`; a function because the port is known only once listening. */
  mcpUrl?: () => string | undefined;
  /** The bearer token for MCP over HTTP. */
  token?: string;
  /** Absolute path of `bin/uplink`. */
  cliPath?: string;
  /** The stdio MCP argv when it is not `<cliPath> mcp` (a packaged app runs itself: `Uplink mcp`). */
  stdioCommand?: string[];
  version: string;
  /** The OS user the operator's decisions are recorded as. */
  user: string;
  /** A running demo's story (`uplink demo`), shown in the presenter strip. */
  presenter?: PanelPresenter;
}

/** The operator-side source of the presenter strip: the demo process writes it, panels read it. */
export interface PanelPresenter {
  current(): DemoStep | undefined;
  subscribe(listener: (step: DemoStep) => void): Disposer;
}

/** Broadcasts that concern every open panel (rules changed, hub status). */
export interface PanelBroadcast {
  emit<E extends PanelEventName>(event: E, payload: PanelEvents[E]): void;
  on(listener: <E extends PanelEventName>(event: E, payload: PanelEvents[E]) => void): Disposer;
}

/** An open panel session. */
export interface PanelSession {
  handlers: PanelHandlers;
  close(): void;
}

/** Most bytes of events in one page of `queryTimeline`, whatever its `limit`. */
export const PAGE_BYTES = 1024 * 1024;

/** Builds the hub status payload. */
export function hubStatus(hub: Hub, startedAt: number, version: string): PanelEvents['hubStatus'] {
  const auditError = hub.auditFailure();
  return {
    started_at: startedAt,
    pending_approvals: hub.pendingApprovals().length,
    attached_panels: hub.panelsAttached(),
    version,
    ...(auditError ? { audit_error: auditError } : {}),
  };
}

/** A channel as the panel shows it: the tier control offers exactly the tiers its driver declares. */
const toPanelChannel = (info: DriverInfo | undefined, driver: string, entry: ChannelEntry): PanelChannel => {
  const out: PanelChannel = { ...entry, driver };
  const detail = entry.detail;
  if (detail && typeof detail === 'object' && !Array.isArray(detail) && typeof detail.tier === 'string') {
    out.tier = detail.tier;
    if (info?.tiers?.length) out.tiers = info.tiers;
  }
  return out;
};

/** Opens a session; `emit` sends an event to this panel only; `via` names the credential (audit). */
export function openPanelSession(
  hub: Hub,
  host: PanelHostInfo,
  broadcast: PanelBroadcast,
  emit: <E extends PanelEventName>(event: E, payload: PanelEvents[E]) => void,
  startedAt: number,
  via?: string,
): PanelSession {
  // Who decided, and through which credential: `alice via panel-session:x1Y2z3`, `alice via electron`.
  const by = via ? `${host.user} via ${via}` : host.user;
  const operator: AgentIdentity = { kind: 'panel', agent_id: OPERATOR_AGENT_ID, name: OPERATOR_AGENT_ID, user: by };
  const disposers: Disposer[] = [];
  disposers.push(hub.attachPanel());
  disposers.push(hub.subscribe((entry) => emit('runtimeEvent', toTimelineEvent(entry))));
  disposers.push(
    hub.subscribeApprovals((event) => {
      switch (event.type) {
        case 'added':
          emit('approvalAdded', declaredApproval(event.approval));
          break;
        case 'resolved': {
          const { type: _type, ...rest } = event;
          emit('approvalResolved', JSON.parse(JSON.stringify(rest)) as PanelEvents['approvalResolved']);
          // Whoever decided (this panel, another, `uplink approve`), every panel sees the new rule or grant.
          if (event.decision === 'always') emit('rulesChanged', hub.listRules().map(toPanelRule));
          if (event.decision === 'session') emit('sessionGrantsChanged', hub.listSessionGrants());
          break;
        }
        case 'updated':
          emit('approvalUpdated', declaredApproval(event.approval));
          break;
        case 'withdrawn':
          emit('approvalResolved', { approval_id: event.approval_id, granted: false, authorized: 'withdrawn', reason: event.reason });
          break;
        default: {
          const never: never = event;
          void never;
        }
      }
      emit('hubStatus', hubStatus(hub, startedAt, host.version));
    }),
  );
  disposers.push(broadcast.on((event, payload) => emit(event, payload)));
  disposers.push(
    hub.subscribeFleet((change) => {
      if (change.type === 'status') emit('fleetChanged', toFleetView(change.status));
      else emit('fleetEntry', toFleetEntry(change.entry));
    }),
  );
  disposers.push(hub.onAuditChange(() => emit('hubStatus', hubStatus(hub, startedAt, host.version))));
  broadcast.emit('hubStatus', hubStatus(hub, startedAt, host.version));
  if (host.presenter) {
    disposers.push(host.presenter.subscribe((step) => emit('demoStep', step)));
    const step = host.presenter.current();
    if (step) emit('demoStep', step);
  }

  const settings = (): PanelSettings => {
    const out: PanelSettings = { approval_timeout_ms: hub.approvalTimeoutMs(), data_dir: hub.dataDir, version: host.version };
    const config = hub.configStatus();
    if (config.error) out.config_error = config.error;
    const url = host.mcpUrl?.();
    if (url) out.mcp_url = url;
    if (host.token) out.mcp_token = host.token;
    if (host.cliPath) out.cli_path = host.cliPath;
    const stdio = host.stdioCommand ?? (host.cliPath ? [host.cliPath, 'mcp'] : undefined);
    if (stdio) out.stdio_command = stdio;
    return out;
  };
  const rulesChanged = (): void => broadcast.emit('rulesChanged', hub.listRules().map(toPanelRule));
  // A hand edit of config.json reaches an open panel too: its rules and settings are redrawn.
  disposers.push(
    hub.onConfigChange(() => {
      emit('rulesChanged', hub.listRules().map(toPanelRule));
      emit('settingsChanged', settings());
    }),
  );
  const grantsChanged = (): void => broadcast.emit('sessionGrantsChanged', hub.listSessionGrants());

  const handlers: PanelHandlers = {
    async listChannels() {
      const overview = await hub.overview();
      const list: ChannelList = { channels: [], health: [], errors: [] };
      for (const d of overview) {
        list.health.push(d.health);
        if (d.error) list.errors.push({ driver: d.driver, error: d.error });
        for (const c of d.channels) list.channels.push(toPanelChannel(d.info, d.driver, c));
      }
      return list;
    },
    async describeChannel({ channel }) {
      const described = await hub.describe(channel);
      const driver = driverOfChannel(channel);
      const info = hub.drivers().find((d) => d.id === driver);
      return { channel: toPanelChannel(info, driver, described.channel), ops: described.ops };
    },
    async previewChannel({ channel }) {
      const ops = await hub.ops(channel);
      const has = (op: string) => ops.some((o) => o.op === op && !o.mutating);
      const op = has('read') ? 'read' : has('screenshot') ? 'screenshot' : undefined;
      if (!op) return { error: `${clipName(channel)} has no read-only preview op — hint: run one of its ops from the form below` };
      // Opening a page must not make a call the hub refuses (and records in the operator's name):
      // the preview reads with the op's default args, and only when they satisfy its schema.
      const defaults = await defaultArgsFor(ops.find((o) => o.op === op)!.params_schema);
      if ('problem' in defaults)
        return { error: `${clipName(channel)}'s ${op} needs args to preview (${defaults.problem}) — hint: run ${op} from the form below` };
      try {
        // A window is looked at through its driver's preview (live views ask several times a
        // second): looking is not an action and writes no audit row. Text is read as an op.
        if (op === 'screenshot') {
          const look = await hub.lookAt(channel);
          if (look) {
            if (!look.image_png)
              return {
                error: look.warnings?.[0] ?? `${channel} gave no picture — hint: is the window mapped?`,
                ...(look.warnings?.length ? { warnings: look.warnings } : {}),
              };
            return { image_png: look.image_png, ...(look.warnings?.length ? { warnings: look.warnings } : {}) };
          }
        }
        const result = await hub.invoke(channel, op, defaults.args, { agent: operator, expect: 'read_only' });
        const r = (result && typeof result === 'object' && !Array.isArray(result) ? result : {}) as Record<string, JsonValue>;
        const out: { text?: string; image_png?: string } = {};
        if (typeof r.text === 'string') out.text = r.text;
        const png = r.png_base64 ?? r.image_png ?? r.png;
        if (typeof png === 'string') out.image_png = png;
        return out;
      } catch (error) {
        return { error: renderError(channel, error) };
      }
    },
    async runOp({ channel, op, args }) {
      try {
        const output = await hub.invoke(channel, op, args, { agent: operator });
        return { ok: true, output };
      } catch (error) {
        return { ok: false, error: renderError(channel, error) };
      }
    },
    async setTier({ channel, tier }) {
      await hub.setTier(channel, tier, operator);
      return { channel, tier };
    },
    async listPendingApprovals() {
      return hub.pendingApprovals().map(declaredApproval);
    },
    async decide({ approval_id, decision, reason, scope }) {
      try {
        // The resolution tells every panel of a new rule or grant (see subscribeApprovals above).
        const result = await hub.decide(approval_id, { kind: decision, by, ...(reason ? { reason } : {}), ...(scope ? { scope } : {}) });
        return { accepted: true, granted: result.granted, ...(result.rule_id ? { rule_id: result.rule_id } : {}) };
      } catch (error) {
        // A second decision, or one after the timeout, is not an error for the panel: it is final.
        return { accepted: false, message: renderError(undefined, error) };
      }
    },
    async denyAll({ agent, reason }) {
      return { denied: (await hub.denyAll(agent, by, reason)).length };
    },
    async refreshApproval({ approval_id }) {
      return declaredApproval(await hub.refreshApproval(approval_id, by));
    },
    async revealApprovalArgs({ approval_id }) {
      return { args: hub.revealApprovalArgs(approval_id, host.user) };
    },
    async listRules() {
      return hub.listRules().map(toPanelRule);
    },
    async revokeRule({ rule_id }) {
      await hub.revokeRule(rule_id, by);
      rulesChanged();
      return { revoked: true };
    },
    async confirmRule({ rule_id, digest }) {
      await hub.confirmRule(rule_id, digest, by);
      rulesChanged();
      return { confirmed: true };
    },
    async updateRule({ rule_id, channel, ops, agent, args }) {
      await hub.updateRule(rule_id, { channel, ops, ...(agent !== undefined ? { agent } : {}), ...(args !== undefined ? { args } : {}) }, by);
      rulesChanged();
      return { updated: true };
    },
    async listSessionGrants() {
      return hub.listSessionGrants();
    },
    async revokeSessionGrant({ grant_id }) {
      await hub.revokeSessionGrant(grant_id, by);
      grantsChanged();
      return { revoked: true };
    },
    async getSettings() {
      return settings();
    },
    async setApprovalTimeout({ timeout_ms }) {
      await hub.setApprovalTimeoutMs(timeout_ms, by);
      return settings();
    },
    async queryTimeline({ filter, before, limit }) {
      const page = hub.queryAudit({ ...filter, ...(before !== undefined ? { before } : {}), limit: Math.min(limit ?? 500, 1000) });
      // A page is bounded in bytes as well as count, so one frame never keeps a panel (or the
      // hub's socket) busy for long: the newest events up to PAGE_BYTES, the rest on the next page.
      const events = [];
      let bytes = 0;
      let next = page.next_cursor ?? null;
      for (const entry of page.entries) {
        const event = toTimelineEvent(entry);
        bytes += Buffer.byteLength(JSON.stringify(event));
        if (bytes > PAGE_BYTES && events.length > 0) {
          next = events[events.length - 1]!.id;
          break;
        }
        events.push(event);
      }
      // The store pages newest first; the panel wants ascending order.
      events.sort((a, b) => a.id - b.id);
      return { events, next_before: next };
    },
    async searchTimeline(req) {
      return searchTimeline(hub, req);
    },
    async getInvocation({ invocation_id }) {
      const entries = [];
      let after = 0;
      for (let i = 0; i < 20; i++) {
        const page = hub.queryAudit({ invocation_id, after, limit: 1000 });
        entries.push(...page.entries);
        if (page.next_cursor === undefined || page.entries.length === 0) break;
        after = page.next_cursor;
      }
      entries.sort((a, b) => a.id - b.id);
      return toInvocationDetail(invocation_id, entries);
    },
    async listProviders() {
      return hub
        .providers()
        .map((p) => ({ provider_id: p.provider_id, version: p.version, driver: p.driver, interaction: p.interaction, capabilities: p.capabilities }));
    },
    async listAgents() {
      return hub.listAgents();
    },
    async createAgent({ name }) {
      return hub.createAgent(name, host.user);
    },
    async revokeAgent({ name }) {
      await hub.revokeAgent(name, host.user);
      return { revoked: true };
    },
    async driverStatus() {
      return hub.driverStatus();
    },
    async driverTrace({ driver, method, after, limit }) {
      return hub.driverTrace(driver, { ...(method ? { method } : {}), ...(after !== undefined ? { after } : {}), limit: limit ?? 200 });
    },
    async trustDriver({ driver, sha256 }) {
      return hub.trustDriver(driver, sha256, by);
    },
    async restartDriver({ driver }) {
      return hub.restartDriver(driver, by);
    },
    async fleetStatus() {
      return toFleetView(hub.fleetStatus());
    },
    async fleetTimeline({ hub: member, before, limit }) {
      const page = hub.fleetHistory({ ...(member ? { hub: member } : {}), ...(before !== undefined ? { before } : {}), limit: limit ?? 500 });
      return { entries: page.entries.map(toFleetEntry), next_before: page.next_before ?? null };
    },
    async explainSelection({ capability_id, version_requirement, provider_id, interaction }) {
      return toPanelExplanation(
        await hub.explainSelection(
          capability_id,
          { ...(provider_id ? { provider_id } : {}), ...(interaction ? { interaction } : {}) },
          version_requirement || undefined,
        ),
      );
    },
  };

  let closed = false;
  return {
    handlers,
    close() {
      if (closed) return;
      closed = true;
      for (const d of disposers.splice(0)) d();
      broadcast.emit('hubStatus', hubStatus(hub, startedAt, host.version));
    },
  };
}
