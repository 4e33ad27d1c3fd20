/**
 * The approval broker: the kernel's policy. Read-only ops permit; mutating ops are decided by the
 * CLI (a human at a terminal), a session grant, a standing rule, or the operator in a panel — and
 * denied at once when no panel is attached. Every decision is written to the audit store
 * (decisions by a person fsynced) before it takes effect, so a decision the agent heard of
 * survives a crash.
 */
import { randomBytes } from 'node:crypto';
import type { ApprovalOutcome, JsonValue, Policy, PolicyDecision } from '../kernel/types';
import type { ApprovalPreview } from '../drivers/contract';
import type { AuditStore } from './audit-store';
import type { CallContext, CallTable } from './call-context';
import type { ConfigStore } from './config';
import type { DecideResult } from './hub';
import { HubError } from './errors';
import { editConfig } from './approval-settings';
import { globMatch } from './redact';
import type { ApprovalDecision, ApprovalEvent, AuditEntry, Disposer, PendingApproval, StandingRule, StandingRuleStatus } from './types';

/** What the broker needs from the hub. */
export interface BrokerHost {
  calls: CallTable;
  config: ConfigStore;
  audit: AuditStore;
  /** Records an entry and feeds the live timeline. */
  record(entry: Omit<AuditEntry, 'id'>, durable?: boolean): void;
  /** Driver preview for the prompt (bounded in time by the hub). */
  preview(ctx: CallContext): Promise<ApprovalPreview | undefined>;
  now(): number;
}

interface Pending {
  approval: PendingApproval;
  ctx: CallContext;
  resolve: (outcome: ApprovalOutcome) => void;
  timer: ReturnType<typeof setTimeout>;
}

/** Keeps a bounded memory of finished approvals, so a late decision gets "already decided". */
const DECIDED_MEMORY = 2000;

function newId(prefix: string): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`;
}

/** The approval broker. */
export class ApprovalBroker {
  #host: BrokerHost;
  #pending = new Map<string, Pending>();
  #decided = new Map<string, string>();
  #sessionGrants = new Set<string>();
  #listeners = new Set<(e: ApprovalEvent) => void>();
  #panels = 0;

  constructor(host: BrokerHost) {
    this.#host = host;
  }

  /** The kernel policy. */
  readonly policy: Policy = (pctx): PolicyDecision | Promise<PolicyDecision> => {
    const ctx = this.#host.calls.get(pctx.request.invocation_id);
    if (!ctx) return { kind: 'deny', reason: 'unknown caller' };
    ctx.provider_id = pctx.offer.provider.id;
    ctx.interaction = pctx.offer.interaction;
    if (pctx.offer.capability.safety === 'read_only') {
      // Recorded on the invocation's `accepted` entry (authorized=default_policy): no extra row on the hot path.
      ctx.authorized = 'default_policy';
      return { kind: 'permit' };
    }
    if (ctx.agent.kind === 'cli' || ctx.agent.kind === 'panel') {
      const how = ctx.agent.kind === 'cli' ? 'cli' : 'operator';
      this.#decision(ctx, true, how, ctx.agent.user ?? ctx.agent.name, `${ctx.agent.kind} is a human at the controls`, true);
      return { kind: 'permit' };
    }
    if (this.#sessionGrants.has(this.#sessionKey(ctx))) {
      this.#decision(ctx, true, 'session', undefined, 'approved for this channel+op for the session', true);
      return { kind: 'permit' };
    }
    const rule = this.#matchRule(ctx);
    if (rule) {
      this.#host.audit.touchRule(rule.id, this.#host.now());
      this.#decision(ctx, true, `rule:${rule.id}`, rule.created_by, 'standing rule', true);
      return { kind: 'permit' };
    }
    if (this.#panels === 0) {
      ctx.deny = this.#noPanelDeny(ctx, 'no Uplink panel is open');
      this.#decision(ctx, false, 'default_policy', undefined, 'no panel attached', true);
      return { kind: 'deny', reason: ctx.deny.reason };
    }
    return { kind: 'ask', approval: this.#ask(ctx) };
  };

  /**
   * Marks a panel as attached; returns the detach. When the last panel detaches, pending prompts
   * are denied at once (SPEC: with no panel attached, mutating ops are denied at once): nobody is
   * left to answer them, and the agent should hear so now rather than at the timeout.
   */
  attachPanel(): Disposer {
    this.#panels++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.#panels--;
      if (this.#panels === 0) this.#denyAllNoPanel();
    };
  }

  panelsAttached(): number {
    return this.#panels;
  }

  pending(): PendingApproval[] {
    return [...this.#pending.values()].map((p) => p.approval).sort((a, b) => a.created_at - b.created_at);
  }

  subscribe(listener: (e: ApprovalEvent) => void): Disposer {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The operator's decision; final. */
  decide(approvalId: string, decision: ApprovalDecision): DecideResult {
    const p = this.#pending.get(approvalId);
    if (!p) {
      const before = this.#decided.get(approvalId);
      if (before) throw new HubError('core', 'Rejected', `approval ${approvalId} was already decided (${before})`, { hint: 'the first decision stands; nothing to do' });
      throw new HubError('core', 'NotFound', `no pending approval ${approvalId}`, { hint: 'list pending approvals in the panel' });
    }
    if (!['once', 'session', 'always', 'deny'].includes(decision.kind)) {
      throw new HubError('core', 'Invalid', `unknown decision ${String(decision.kind)}`, { hint: 'decide with once, session, always or deny' });
    }
    const { ctx } = p;
    let ruleId: string | undefined;
    // "always" edits the config first: if that fails the prompt stays open and nothing is decided.
    if (decision.kind === 'always') {
      ruleId = newId('rule');
      const rule: StandingRule = { id: ruleId, channel: ctx.channel, op: ctx.op, agent: ctx.agent.name, created_at: new Date(this.#host.now()).toISOString(), created_by: decision.by };
      editConfig(
        this.#host.config,
        (raw) => {
          const approvals = (raw.approvals ?? {}) as { rules?: StandingRule[] };
          approvals.rules = [...(approvals.rules ?? []), rule];
          raw.approvals = approvals;
        },
        'save the standing rule (decide once or for the session instead)',
      );
    }
    if (decision.kind === 'session') this.#sessionGrants.add(this.#sessionKey(ctx));
    const granted = decision.kind !== 'deny';
    const reason = decision.reason?.slice(0, 2000);
    const summary = { once: 'approved once', session: 'approved for the session', always: `approved always (${ruleId})`, deny: 'denied' }[decision.kind];
    // Durable first: if it cannot be recorded, it does not take effect and the prompt stays open.
    this.#decision(ctx, granted, 'operator', decision.by, reason ?? summary, true);
    this.#finish(approvalId, `${summary} by ${decision.by}`);
    if (!granted) {
      ctx.deny = {
        reason: reason ? `the operator denied ${ctx.op} on ${ctx.channel}: ${reason}` : `the operator denied ${ctx.op} on ${ctx.channel}`,
        hint: 'do not retry the same action unchanged; ask the operator what they want instead',
      };
    }
    p.resolve({ granted, by: decision.by, ...(reason ? { reason } : {}) });
    this.#emit({ type: 'resolved', approval_id: approvalId, granted, authorized: 'operator', by: decision.by, ...(reason ? { reason } : {}), ...(ruleId ? { rule_id: ruleId } : {}) });
    return { approval_id: approvalId, granted, ...(ruleId ? { rule_id: ruleId } : {}) };
  }

  /**
   * The raw args of a pending prompt, for the operator to see what will be injected before
   * approving. Answered from memory only while the prompt is pending; the audit records that the
   * operator looked, never what they saw.
   */
  reveal(approvalId: string, by: string): JsonValue {
    const p = this.#pending.get(approvalId);
    if (!p) throw new HubError('core', 'NotFound', `no pending approval ${approvalId}`, { hint: 'only a prompt still waiting for a decision can be revealed' });
    const { ctx } = p;
    if (ctx.sensitive) {
      this.#host.record(
        {
          at: this.#host.now(),
          type: 'decision',
          kind: 'decision',
          invocation_id: ctx.invocation_id,
          channel: ctx.channel,
          op: ctx.op,
          capability_id: ctx.capability_id,
          agent: ctx.agent,
          by,
          reason: 'operator revealed sensitive args',
        },
        true,
      );
    }
    return ctx.rawArgs ?? {};
  }

  /** The invocation ended while waiting (cancelled): drop its prompt. */
  abandon(invocationId: string, why: 'cancelled' | 'closed'): void {
    for (const [id, p] of this.#pending) {
      if (p.ctx.invocation_id !== invocationId && why !== 'closed') continue;
      this.#finish(id, why);
      p.ctx.deny = { reason: why === 'closed' ? 'the hub stopped before the operator decided' : `${p.ctx.op} on ${p.ctx.channel} was cancelled` };
      this.#safeDecision(p.ctx, why);
      p.resolve({ granted: false, reason: why });
      this.#emit({ type: 'resolved', approval_id: id, granted: false, authorized: why });
    }
  }

  #denyAllNoPanel(): void {
    for (const [id, p] of [...this.#pending]) {
      this.#finish(id, 'denied: the last panel closed');
      p.ctx.deny = this.#noPanelDeny(p.ctx, 'the Uplink panel was closed before the operator decided');
      this.#safeDecision(p.ctx, 'the last panel detached before a decision');
      p.resolve({ granted: false, reason: 'no panel attached' });
      this.#emit({ type: 'resolved', approval_id: id, granted: false, authorized: 'default_policy' });
    }
  }

  /** The no-panel denial: what the agent is told and how it can get approval. */
  #noPanelDeny(ctx: CallContext, why: string): { reason: string; hint: string } {
    return {
      reason: `${ctx.op} on ${ctx.channel} needs operator approval and ${why}`,
      hint: `open the panel (\`uplink serve\`, or \`npm start\` for the desktop app) and retry, or add a standing rule to ${this.#host.config.path} approvals.rules`,
    };
  }

  /** Standing rules with their usage. */
  rules(): StandingRuleStatus[] {
    const usage = this.#host.audit.ruleUsage();
    return this.#host.config.get().approvals.rules.map((r) => {
      const u = usage.get(r.id);
      return { ...r, uses: u?.uses ?? 0, ...(u ? { last_used_at: u.last_used_at } : {}) };
    });
  }

  #sessionKey(ctx: CallContext): string {
    return JSON.stringify([ctx.agent.kind, ctx.agent.session ?? ctx.agent.name, ctx.channel, ctx.op]);
  }

  #matchRule(ctx: CallContext): StandingRule | undefined {
    const names = [ctx.channel, ...ctx.labels.map((l) => `${ctx.driver}:${l}`)];
    return this.#host.config.get().approvals.rules.find(
      (r) => names.some((n) => globMatch(r.channel, n)) && globMatch(r.op, ctx.op) && (r.agent === undefined || globMatch(r.agent, ctx.agent.name)),
    );
  }

  #ask(ctx: CallContext): Promise<ApprovalOutcome> {
    const now = this.#host.now();
    const timeout = this.#host.config.get().approvals.timeout_ms;
    const approval: PendingApproval = {
      approval_id: newId('appr'),
      invocation_id: ctx.invocation_id,
      agent: ctx.agent,
      channel: ctx.channel,
      channel_labels: ctx.labels,
      op: ctx.op,
      capability_id: ctx.capability_id,
      args: ctx.args ?? {},
      provider_id: ctx.provider_id ?? '',
      interaction: ctx.interaction ?? 'typed',
      created_at: now,
      deadline: now + timeout,
      ...(ctx.sensitive ? { sensitive: true } : {}),
    };
    ctx.approval_id = approval.approval_id;
    return new Promise<ApprovalOutcome>((resolve) => {
      const timer = setTimeout(() => this.#timeout(approval.approval_id, timeout), timeout);
      timer.unref?.();
      this.#pending.set(approval.approval_id, { approval, ctx, resolve, timer });
      // The prompt appears once the preview is in (the hub bounds it), so the operator sees it whole.
      void this.#host
        .preview(ctx)
        .catch(() => undefined)
        .then((preview) => {
          if (preview) approval.preview = preview;
          if (this.#pending.has(approval.approval_id)) this.#emit({ type: 'added', approval });
        });
    });
  }

  #timeout(approvalId: string, timeout: number): void {
    const p = this.#pending.get(approvalId);
    if (!p) return;
    this.#finish(approvalId, 'timed out');
    const secs = Math.round(timeout / 1000);
    p.ctx.deny = {
      reason: `${p.ctx.op} on ${p.ctx.channel} was not approved within ${secs} s`,
      hint: `ask the operator to watch the Uplink panel and retry, or add a standing rule to ${this.#host.config.path} approvals.rules`,
    };
    this.#safeDecision(p.ctx, `no operator decision within ${secs} s`);
    p.resolve({ granted: false, reason: 'timeout' });
    this.#emit({ type: 'resolved', approval_id: approvalId, granted: false, authorized: 'timeout' });
  }

  #finish(approvalId: string, outcome: string): void {
    const p = this.#pending.get(approvalId);
    if (p) clearTimeout(p.timer);
    this.#pending.delete(approvalId);
    this.#decided.set(approvalId, outcome);
    if (this.#decided.size > DECIDED_MEMORY) this.#decided.delete(this.#decided.keys().next().value!);
  }

  #decision(ctx: CallContext, granted: boolean, authorized: string, by: string | undefined, reason: string, durable = false): void {
    this.#host.record(
      {
        at: this.#host.now(),
        type: 'decision',
        kind: 'decision',
        invocation_id: ctx.invocation_id,
        channel: ctx.channel,
        op: ctx.op,
        capability_id: ctx.capability_id,
        agent: ctx.agent,
        ...(ctx.provider_id ? { provider_id: ctx.provider_id } : {}),
        ...(ctx.interaction ? { interaction: ctx.interaction } : {}),
        granted,
        authorized,
        ...(by ? { by } : {}),
        reason,
        ...(ctx.args !== undefined ? { args: ctx.args } : {}),
      },
      durable,
    );
  }

  /** A denial that must happen even if the store is failing (timeouts, cancels, shutdown). */
  #safeDecision(ctx: CallContext, reason: string): void {
    try {
      this.#decision(ctx, false, 'default_policy', undefined, reason, true);
    } catch {
      // Denying is the safe outcome; the failed write is visible in `uplink doctor` (audit).
    }
  }

  #emit(e: ApprovalEvent): void {
    for (const l of this.#listeners) {
      try {
        l(e);
      } catch {
        // A listener's failure must not stop the broker.
      }
    }
  }
}
