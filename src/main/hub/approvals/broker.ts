/**
 * The approval broker: the kernel's policy. Read-only ops permit; mutating ops are decided by the
 * CLI (a human at a terminal), a session grant, a standing rule, or the operator in a panel. With
 * no panel attached a prompt waits for one like any prompt (a panel that connects sees it), unless
 * `approvals.when_no_panel` is `deny`: then it is denied at once. Every decision is written to the audit store
 * (decisions by a person fsynced) before it takes effect, so a decision the agent heard of
 * survives a crash.
 */
import { randomBytes } from 'node:crypto';
import type { ApprovalOutcome, InteractionKind, JsonValue, Policy, PolicyDecision } from '../../kernel';
import type { ApprovalPreview } from '../../drivers';
import type { AuditStore } from '../audit';
import type { CallContext } from '../call-context';
import type { ConfigStore } from '../config';
import type { DecideResult } from '../hub';
import { HubError } from '../errors';
import { AGENT_ASK_HINT, denialError } from './denial';
import type { Denial } from './denial';
import { clipName } from '../../../shared/escape';
import { describeAuthorization } from '../../../shared/audit-record';
import { StandingRules } from './rules';
import { alwaysChannel, argsField, coversChannel, decidedScope, redactedField } from './scope';
import { globMatch } from '../../drivers';
import { argsMatch } from './arg-constraints';
import { scopeInWords } from '../../../shared/arg-constraints';
import type { OpParams } from './arg-constraints';
import { Emitter } from '../../../shared/emitter';
import type { ApprovalDecision, ApprovalEvent, AuditEntry, Disposer, PendingApproval, RecordedAuthorization, SessionGrant, StandingRule } from '../types';

/** What the broker needs from the hub. */
export interface BrokerHost {
  config: ConfigStore;
  audit: AuditStore;
  /** Records an entry and feeds the live timeline. */
  record(entry: Omit<AuditEntry, 'id'>, durable?: boolean): void;
  /** Driver preview for the prompt (bounded in time by the hub). */
  preview(ctx: CallContext): Promise<ApprovalPreview | undefined>;
  /**
   * The driver's side-effect-free refusal of this call, if it has one (bounded in time by the hub):
   * what the op itself would throw, so the operator is never asked about a call bound to fail.
   */
  precheck?(ctx: CallContext, args: JsonValue, interaction: InteractionKind): Promise<HubError | undefined>;
  /** Every op of every driver, for checking the arg names a scope constrains. */
  opParams?(): OpParams[];
  now(): number;
  /** How long pending prompts wait for a panel to re-attach after the last one left (default 15 s). */
  panelGraceMs?: number;
  /** How often a pending prompt's precheck runs again while a panel is attached (default 5 s; 0: never). */
  recheckMs?: number;
}

/** Default interval of checking pending prompts again. */
export const RECHECK_MS = 5000;
/** At most this many prompts are checked again per interval (the oldest first), so a flood stays cheap. */
const RECHECK_BATCH = 32;

/** Default wait for a panel to come back before pending prompts are denied. */
export const PANEL_GRACE_MS = 15_000;

/** Which provider and interaction the kernel pinned for a call (from the policy's offer). */
interface Via {
  provider_id: string;
  interaction: InteractionKind;
}

interface Pending {
  approval: PendingApproval;
  ctx: CallContext;
  via: Via;
  /** The validated args the precheck sees (as when the prompt was raised). */
  args: JsonValue;
  resolve: (outcome: ApprovalOutcome) => void;
  timer: ReturnType<typeof setTimeout>;
  /** The panel has been told of it (`added`): changes go out as `updated`. */
  shown?: boolean;
  /** A periodic check in flight: at most one per prompt. */
  checking?: boolean;
  /** The decision being applied (checked first), which the next one waits for. */
  turn?: Promise<void>;
}

/** Keeps a bounded memory of finished approvals, so a late decision gets "already decided". */
const DECIDED_MEMORY = 2000;

/** The fields every decision about a call carries. */
function decisionOf(ctx: CallContext, at: number): Omit<AuditEntry, 'id'> {
  return {
    at,
    type: 'decision',
    kind: 'decision',
    invocation_id: ctx.invocation_id,
    channel: ctx.channel,
    op: ctx.op,
    capability_id: ctx.capability_id,
    agent: ctx.recorded,
  };
}

function newId(prefix: string): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`;
}

/** The approval broker. */
export class ApprovalBroker {
  #host: BrokerHost;
  #pending = new Map<string, Pending>();
  #decided = new Map<string, string>();
  #sessionGrants = new Map<string, { who: string; grant: SessionGrant }>();
  /** The standing rules (config.json), matched before the operator is asked. */
  readonly rules: StandingRules;
  #events = new Emitter<ApprovalEvent>();
  #panels = 0;
  /** Runs out when no panel came back in time after the last one detached. */
  #grace: ReturnType<typeof setTimeout> | undefined;
  /** Checks pending prompts again while there are any. */
  #recheck: ReturnType<typeof setInterval> | undefined;

  constructor(host: BrokerHost) {
    this.#host = host;
    this.rules = new StandingRules(host);
  }

  /** The kernel policy. */
  readonly policy: Policy<CallContext> = (pctx): PolicyDecision | Promise<PolicyDecision> => {
    const ctx = pctx.context;
    if (!ctx) return { kind: 'deny', reason: 'unknown caller' };
    // Read-only: permitted; the timeline records it on the invocation's `accepted` entry
    // (authorized=default_policy), so there is no extra row on the hot path.
    if (pctx.offer.capability.safety === 'read_only') return { kind: 'permit' };
    const via: Via = { provider_id: pctx.offer.provider.id, interaction: pctx.offer.interaction };
    if (ctx.agent.kind === 'cli' || ctx.agent.kind === 'panel') {
      const how = ctx.agent.kind === 'cli' ? 'cli' : 'operator';
      this.#decision(ctx, via, true, how, ctx.agent.user ?? ctx.agent.id, `${ctx.agent.kind} is a human at the controls`, true);
      return { kind: 'permit' };
    }
    if (this.#sessionGrantFor(ctx)) {
      this.#decision(ctx, via, true, 'session', undefined, 'approved for this channel+op for the session', true);
      return { kind: 'permit' };
    }
    const rule = this.rules.match(ctx);
    if (rule) {
      this.#host.audit.touchRule(rule.id, this.#host.now());
      this.#decision(ctx, via, true, `rule:${rule.id}`, rule.created_by, 'standing rule', true);
      return { kind: 'permit' };
    }
    const input = pctx.request.input as { args?: JsonValue } | null;
    const refusal = this.#host.precheck?.(ctx, input?.args ?? {}, via.interaction);
    if (!refusal) return this.#askOperator(ctx, via, input?.args ?? {});
    return refusal.then((error) => {
      if (!error) return this.#askOperator(ctx, via, input?.args ?? {});
      // Nobody decided: the hub records the call as rejected with the driver's error, as when the op refuses.
      return { kind: 'deny', reason: error.message, cause: error };
    });
  };

  #askOperator(ctx: CallContext, via: Via, args: JsonValue): PolicyDecision {
    if (this.#panels === 0 && this.#denyWithoutPanel()) {
      const denial = this.#noPanelDeny(ctx, 'no Uplink panel is open');
      // A denial stands even when its decision row cannot be written: the call's own rejected row
      // still reaches the journal before the agent hears it, and doctor shows the failing audit.
      this.#safeDecision({ ctx, via }, 'no panel attached', 'default_policy');
      return { kind: 'deny', reason: denial.reason, cause: denialError(ctx, denial) };
    }
    return { kind: 'ask', approval: this.#ask(ctx, via, args) };
  }

  /** Whether the operator chose to refuse at once, rather than keep asking, while no panel is attached. */
  #denyWithoutPanel(): boolean {
    return this.#host.config.get().approvals.when_no_panel === 'deny';
  }

  /** Ends a prompt unanswered or refused: the call fails with `denial` as the agent's error. */
  #deny(p: Pending, denial: Denial, reason: string): void {
    p.resolve({ granted: false, reason, cause: denialError(p.ctx, denial) });
  }

  /**
   * Marks a panel as attached; returns the detach. Pending prompts wait their timeout whether or
   * not a panel is attached, unless `approvals.when_no_panel` is `deny`: then, when the last panel
   * detaches, they wait `panelGraceMs` for one to come back (a reloading tab, a panel dropped for
   * reading too slowly) and are denied only then, and new requests meanwhile are denied at once.
   */
  attachPanel(): Disposer {
    this.#panels++;
    if (this.#grace) clearTimeout(this.#grace);
    this.#grace = undefined;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.#panels--;
      if (this.#panels > 0 || this.#pending.size === 0 || !this.#denyWithoutPanel()) return;
      this.#grace = setTimeout(() => {
        this.#grace = undefined;
        if (this.#panels === 0 && this.#denyWithoutPanel()) this.#denyAllNoPanel();
      }, this.#host.panelGraceMs ?? PANEL_GRACE_MS);
      this.#grace.unref?.();
    };
  }

  panelsAttached(): number {
    return this.#panels;
  }

  pending(): PendingApproval[] {
    return [...this.#pending.values()].map((p) => p.approval).sort((a, b) => a.requested_at - b.requested_at);
  }

  subscribe(listener: (e: ApprovalEvent) => void): Disposer {
    return this.#events.on(listener);
  }

  /**
   * The operator's decision; final. An approval is checked first: when the driver's precheck
   * refuses now (a guard that held when the prompt was raised, such as a recent read, no longer
   * does), it is not applied — the prompt stays pending, marked `would_fail`, and the operator is
   * told why, instead of an approval that fails at once. A denial is never held back.
   */
  async decide(approvalId: string, decision: ApprovalDecision): Promise<DecideResult> {
    const p = this.#lookup(approvalId);
    // One decision at a time per prompt, in the order they came: the first wins, and one sent
    // while an approval is being checked waits for that check (it applies if the approval is held back).
    const turn = (p.turn ?? Promise.resolve()).then(() => this.#decideNow(approvalId, decision));
    p.turn = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  }

  async #decideNow(approvalId: string, decision: ApprovalDecision): Promise<DecideResult> {
    const p = this.#lookup(approvalId);
    if (decision.kind === 'deny' || !this.#host.precheck) return this.#apply(approvalId, p, decision);
    const error = await this.#host.precheck(p.ctx, p.args, p.via.interaction).catch(() => undefined);
    // Decided meanwhile (timed out, another panel): the first decision stands.
    if (this.#pending.get(approvalId) !== p) return this.#apply(approvalId, this.#lookup(approvalId), decision);
    this.#mark(p, error);
    if (error) throw heldBack(p.ctx, error);
    return this.#apply(approvalId, p, decision);
  }

  /** The pending prompt, or why there is none. */
  #lookup(approvalId: string): Pending {
    const p = this.#pending.get(approvalId);
    if (!p) {
      const before = this.#decided.get(approvalId);
      if (before)
        throw new HubError('core', 'Rejected', `approval ${clipName(approvalId)} was already decided (${before})`, {
          hint: 'the first decision stands; nothing to do',
        });
      throw new HubError('core', 'NotFound', `no pending approval ${clipName(approvalId)}`, { hint: 'list pending approvals in the panel' });
    }
    return p;
  }

  /** Applies a decision to a pending prompt: recorded durably first, then in effect. */
  #apply(approvalId: string, p: Pending, decision: ApprovalDecision): DecideResult {
    if (!['once', 'session', 'always', 'deny'].includes(decision.kind)) {
      throw new HubError('core', 'Invalid', `unknown decision ${clipName(decision.kind)}`, { hint: 'decide with once, session, always or deny' });
    }
    const { ctx, via } = p;
    let ruleId: string | undefined;
    // "always" edits the config first: if that fails the prompt stays open and nothing is decided.
    const scope =
      decision.kind === 'session' || decision.kind === 'always'
        ? decidedScope(ctx, decision.kind, decision.scope ?? {}, this.#host.opParams?.() ?? [])
        : undefined;
    if (decision.kind === 'always') {
      ruleId = newId('rule');
      const rule: StandingRule = { id: ruleId, ...this.rules.fields(scope!), created_at: new Date(this.#host.now()).toISOString(), created_by: decision.by };
      this.rules.write(rule, undefined, 'save the standing rule (decide once or for the session instead)');
    }
    let grant: SessionGrant | undefined;
    if (decision.kind === 'session') {
      grant = {
        grant_id: newId('grant'),
        agent: ctx.agent.id,
        session: ctx.session ?? ctx.agent.id,
        ...(ctx.declared.name ? { client: ctx.declared.name } : {}),
        channel: scope!.channel,
        ops: scope!.ops,
        ...argsField(scope!.args),
        granted_by: decision.by,
        granted_at: this.#host.now(),
      };
    }
    const granted = decision.kind !== 'deny';
    const reason = decision.reason?.slice(0, 2000);
    const summary = { once: 'approved once', session: 'approved for the session', always: `approved always (${ruleId})`, deny: 'denied' }[decision.kind];
    // Durable first: if it cannot be recorded, it does not take effect and the prompt stays open.
    this.#decision(ctx, via, granted, 'operator', decision.by, reason ?? summary, true, { decision: decision.kind, ...(ruleId ? { rule_id: ruleId } : {}) });
    if (grant) this.#sessionGrants.set(grant.grant_id, { who: this.#who(ctx), grant });
    this.#finish(approvalId, `${summary} by ${decision.by}`);
    if (granted) p.resolve({ granted, by: decision.by, ...(reason ? { reason } : {}) });
    else {
      const denial = {
        reason: `${ctx.op} on ${ctx.channel}: ${describeAuthorization({ kind: 'decision', invocation_id: ctx.invocation_id, authorized: 'operator', granted: false, decision: 'deny', ...(reason ? { reason } : {}) })}`,
        hint: 'do not retry the same action unchanged; ask the operator what they want instead',
      };
      p.resolve({ granted, by: decision.by, ...(reason ? { reason } : {}), cause: denialError(ctx, denial) });
    }
    this.#emit({
      type: 'resolved',
      approval_id: approvalId,
      granted,
      authorized: 'operator',
      by: decision.by,
      decision: decision.kind,
      ...(reason ? { reason } : {}),
      ...(ruleId ? { rule_id: ruleId } : {}),
    });
    // The new grant covers prompts already queued from the same session, channel and op: they
    // would run without asking if sent now, so they run now, each recorded as the grant's.
    if (grant) {
      for (const [id, q] of [...this.#pending]) {
        if (this.#sessionGrantFor(q.ctx) !== grant) continue;
        try {
          this.#decision(q.ctx, q.via, true, 'session', undefined, 'approved for this channel+op for the session', true);
        } catch {
          continue; // Not recorded, so not approved: it stays for the operator to decide.
        }
        this.#finish(id, `approved for the session by ${decision.by}`);
        q.resolve({ granted: true });
        this.#emit({ type: 'resolved', approval_id: id, granted: true, authorized: 'session' });
      }
    }
    return { approval_id: approvalId, granted, ...(ruleId ? { rule_id: ruleId } : {}) };
  }

  /**
   * Denies every pending prompt of one authenticated agent (a runaway agent), each as its own
   * operator decision with the same reason. Returns the prompts denied.
   */
  denyAll(agentId: string, by: string, reason?: string): string[] {
    const ids = [...this.#pending].filter(([, p]) => p.ctx.agent.id === agentId).map(([id]) => id);
    for (const id of ids) this.#apply(id, this.#lookup(id), { kind: 'deny', by, ...(reason ? { reason } : {}) });
    return ids;
  }

  /**
   * The raw args of a pending prompt, for the operator to see what will be injected before
   * approving. Answered from memory only while the prompt is pending; the audit records that the
   * operator looked, never what they saw.
   */
  reveal(approvalId: string, by: string): JsonValue {
    const p = this.#pending.get(approvalId);
    if (!p)
      throw new HubError('core', 'NotFound', `no pending approval ${clipName(approvalId)}`, {
        hint: 'only a prompt still waiting for a decision can be revealed',
      });
    const { ctx } = p;
    if (ctx.sensitive) this.#host.record({ ...decisionOf(ctx, this.#host.now()), by, reason: 'operator revealed sensitive args' }, true);
    return ctx.rawArgs ?? {};
  }

  /** The invocation ended while waiting (cancelled): drop its prompt. */
  abandon(invocationId: string, why: 'cancelled' | 'closed'): void {
    if (why === 'closed' && this.#grace) clearTimeout(this.#grace);
    if (why === 'closed') clearInterval(this.#recheck);
    for (const [id, p] of this.#pending) {
      if (p.ctx.invocation_id !== invocationId && why !== 'closed') continue;
      this.#finish(id, why);
      this.#safeDecision(p, why, why);
      this.#deny(
        p,
        why === 'closed'
          ? {
              reason: 'the hub stopped before the operator decided',
              hint: `${p.ctx.op} on ${p.ctx.channel} did not run; retry it once the hub is back if it is still wanted`,
              unavailable: true,
            }
          : { reason: `${p.ctx.op} on ${p.ctx.channel} was cancelled` },
        why,
      );
      this.#emit({ type: 'resolved', approval_id: id, granted: false, authorized: why });
    }
  }

  #denyAllNoPanel(): void {
    for (const [id, p] of [...this.#pending]) {
      this.#finish(id, 'denied: the last panel closed');
      this.#safeDecision(p, 'the last panel detached before a decision', 'default_policy');
      this.#deny(p, this.#noPanelDeny(p.ctx, 'the Uplink panel was closed before the operator decided'), 'no panel attached');
      this.#emit({ type: 'resolved', approval_id: id, granted: false, authorized: 'default_policy' });
    }
  }

  /** The no-panel denial: what the agent is told and how it can get approval. */
  #noPanelDeny(ctx: CallContext, why: string): Denial {
    return {
      // The outcome's word first, as every denial words it.
      reason: `${ctx.op} on ${ctx.channel}: denied: it needs operator approval and ${why}`,
      hint: AGENT_ASK_HINT,
    };
  }

  /** Standing rules with their usage, and whether each is only proposed. */
  /** Live session grants. */
  sessionGrants(): SessionGrant[] {
    return [...this.#sessionGrants.values()].map((g) => g.grant).sort((a, b) => a.granted_at - b.granted_at);
  }

  /** Ends one session grant: its calls ask again. */
  revokeSessionGrant(grantId: string, by: string): void {
    const g = this.#sessionGrants.get(grantId)?.grant;
    if (!g) throw new HubError('core', 'NotFound', `no session grant ${clipName(grantId)}`, { hint: 'list the session grants in the panel' });
    this.#host.record(
      {
        at: this.#host.now(),
        type: 'decision',
        kind: 'decision',
        authorized: 'operator',
        by,
        granted: false,
        reason: `session grant ${grantId} revoked: ${scopeInWords(g)} (session ${g.session})`,
      },
      true,
    );
    this.#sessionGrants.delete(grantId);
  }

  /** Whose session a call belongs to: the authenticated agent and its session (never a declared name). */
  #who(ctx: CallContext): string {
    return JSON.stringify([ctx.agent.kind, ctx.agent.id, ctx.session ?? null]);
  }

  #sessionGrantFor(ctx: CallContext): SessionGrant | undefined {
    const who = this.#who(ctx);
    for (const { who: w, grant } of this.#sessionGrants.values()) {
      if (w !== who || !grant.ops.some((o) => globMatch(o, ctx.op)) || !argsMatch(grant.args, ctx.rawArgs, ctx.args)) continue;
      if (grant.channel === ctx.channel || coversChannel(grant.channel, ctx.driver, ctx.labels)) return grant;
    }
    return undefined;
  }

  #ask(ctx: CallContext, via: Via, args: JsonValue): Promise<ApprovalOutcome> {
    const now = this.#host.now();
    const timeout = this.#host.config.get().approvals.timeout_ms;
    const approval: PendingApproval = {
      approval_id: newId('appr'),
      invocation_id: ctx.invocation_id,
      agent: ctx.recorded,
      channel: ctx.channel,
      channel_labels: [...ctx.labels],
      op: ctx.op,
      capability_id: ctx.capability_id,
      args: ctx.args ?? {},
      provider_id: via.provider_id,
      interaction: via.interaction,
      requested_at: now,
      expires_at: now + timeout,
      ...this.#ruleChannel(ctx),
      ...(ctx.sensitive ? { sensitive: true } : {}),
      ...redactedField(ctx),
    };
    return new Promise<ApprovalOutcome>((resolve) => {
      const timer = setTimeout(() => this.#timeout(approval.approval_id, timeout), timeout);
      timer.unref?.();
      const p: Pending = { approval, ctx, via, args, resolve, timer };
      this.#pending.set(approval.approval_id, p);
      this.#startRecheck();
      // The prompt appears once the preview is in (the hub bounds it), so the operator sees it whole.
      void this.#host
        .preview(ctx)
        .catch(() => undefined)
        .then((preview) => {
          if (preview) approval.preview = preview;
          if (this.#pending.get(approval.approval_id) !== p) return;
          p.shown = true;
          this.#emit({ type: 'added', approval });
        });
    });
  }

  /**
   * The operator looks at the target again (the "Fresh preview" of a prompt): the driver's preview
   * and its precheck run anew, and the audit records that `by` looked (never what they saw). This
   * is the operator's look, not the agent's read: it satisfies no read-first guard of the agent.
   */
  async refresh(approvalId: string, by: string): Promise<PendingApproval> {
    const p = this.#lookup(approvalId);
    this.#host.record({ ...decisionOf(p.ctx, this.#host.now()), by, reason: 'operator refreshed the preview' }, true);
    const [preview, error] = await Promise.all([
      this.#host.preview(p.ctx).catch(() => undefined),
      this.#host.precheck ? this.#host.precheck(p.ctx, p.args, p.via.interaction).catch(() => undefined) : undefined,
    ]);
    if (this.#pending.get(approvalId) !== p) return this.#lookup(approvalId).approval;
    if (preview) p.approval.preview = preview;
    this.#mark(p, error, true);
    return p.approval;
  }

  /** Records what a check found on the prompt and tells the panels when that changed (or `force`). */
  #mark(p: Pending, error: HubError | undefined, force = false): void {
    const before = p.approval.would_fail;
    if (error) {
      p.approval.would_fail = {
        reason: error.message.slice(0, 2000),
        ...(error.hint ? { hint: error.hint.slice(0, 2000) } : {}),
        checked_at: this.#host.now(),
      };
    } else delete p.approval.would_fail;
    const after = p.approval.would_fail;
    const changed = before?.reason !== after?.reason || before?.hint !== after?.hint;
    if ((changed || force) && p.shown && this.#pending.get(p.approval.approval_id) === p) this.#emit({ type: 'updated', approval: p.approval });
  }

  /** Runs the pending prompts' prechecks again every `recheckMs` while a panel is attached. */
  #startRecheck(): void {
    const every = this.#host.recheckMs ?? RECHECK_MS;
    if (this.#recheck || every <= 0 || !this.#host.precheck) return;
    this.#recheck = setInterval(() => {
      if (this.#pending.size === 0) {
        clearInterval(this.#recheck);
        this.#recheck = undefined;
        return;
      }
      if (this.#panels === 0) return;
      let started = 0;
      for (const p of this.#pending.values()) {
        if (started >= RECHECK_BATCH) break;
        if (!p.shown || p.checking) continue;
        started++;
        p.checking = true;
        void this.#host.precheck!(p.ctx, p.args, p.via.interaction)
          .catch(() => undefined)
          .then((error) => {
            p.checking = false;
            if (this.#pending.get(p.approval.approval_id) === p) this.#mark(p, error);
          });
      }
    }, every);
    this.#recheck.unref?.();
  }

  #ruleChannel(ctx: CallContext): { rule_channel?: string } {
    try {
      return { rule_channel: alwaysChannel(ctx) };
    } catch {
      return {};
    }
  }

  #timeout(approvalId: string, timeout: number): void {
    const p = this.#pending.get(approvalId);
    if (!p) return;
    this.#finish(approvalId, 'timed out');
    const secs = Math.round(timeout / 1000);
    this.#safeDecision(p, `no operator decision within ${secs} s`, 'timeout');
    const denial = {
      // The countdown the operator saw said "auto-deny in …": the agent hears the same words.
      reason: `${p.ctx.op} on ${p.ctx.channel}: timed out: the operator did not decide within ${secs} s (auto-denied)`,
      hint: AGENT_ASK_HINT,
      timedOut: true,
    };
    this.#deny(p, denial, 'timeout');
    this.#emit({ type: 'resolved', approval_id: approvalId, granted: false, authorized: 'timeout' });
  }

  #finish(approvalId: string, outcome: string): void {
    const p = this.#pending.get(approvalId);
    if (p) clearTimeout(p.timer);
    this.#pending.delete(approvalId);
    this.#decided.set(approvalId, outcome);
    if (this.#decided.size > DECIDED_MEMORY) this.#decided.delete(this.#decided.keys().next().value!);
  }

  #decision(
    ctx: CallContext,
    via: Via,
    granted: boolean,
    authorized: RecordedAuthorization,
    by: string | undefined,
    reason: string,
    durable = false,
    answer: Pick<AuditEntry, 'decision' | 'rule_id'> = {},
  ): void {
    this.#host.record(
      {
        ...decisionOf(ctx, this.#host.now()),
        provider_id: via.provider_id,
        interaction: via.interaction,
        granted,
        authorized,
        ...(by ? { by } : {}),
        reason,
        ...answer,
        ...(ctx.args !== undefined ? { args: ctx.args } : {}),
      },
      durable,
    );
  }

  /** A denial that must happen even if the store is failing (timeouts, cancels, shutdown). */
  #safeDecision(p: Pick<Pending, 'ctx' | 'via'>, reason: string, authorized: RecordedAuthorization): void {
    try {
      this.#decision(p.ctx, p.via, false, authorized, undefined, reason, true);
    } catch {
      // Denying is the safe outcome; the failed write is visible in `uplink doctor` (audit).
    }
  }

  #emit(e: ApprovalEvent): void {
    this.#events.emit(e);
  }
}

/** The operator's approval of a call that would fail now: not applied, and why. */
function heldBack(ctx: CallContext, error: HubError): HubError {
  return new HubError('core', 'Rejected', `not approved: ${ctx.op} on ${ctx.channel} would fail now: ${error.message}`, {
    hint: `the prompt is still pending${error.hint ? ` (the driver says: ${error.hint})` : ''}; approve it again once that holds, or deny it telling the agent what to do first`,
  });
}
