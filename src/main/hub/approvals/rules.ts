/**
 * Standing rules: the operator's "always" decisions in config.json, in force only once confirmed
 * (a rule written into the file by anyone else is proposed), matched against a call's context.
 */
import { dirname } from 'node:path';
import { globMatch } from '../../drivers';
import type { AuditStore } from '../audit';
import type { CallContext } from '../call-context';
import { ruleId as idOf } from '../config';
import type { ConfigStore } from '../config';
import { HubError } from '../errors';
import { clipName } from '../../../shared/escape';
import type { AuditEntry, StandingRule, StandingRuleStatus } from '../types';
import { argsMatch, checkArgConstraints } from './arg-constraints';
import type { OpParams } from './arg-constraints';
import { argsField, authenticatedId, checkRuleScope, coveredOps, coversChannel, describeRule, ruleOps, unmatchableRules } from './scope';
import type { RuleScope } from './scope';
import { ConfirmedRules, editConfig, ruleDigest } from './settings';

/** What the rules need of the hub. */
export interface RulesHost {
  config: ConfigStore;
  audit: AuditStore;
  record(entry: Omit<AuditEntry, 'id'>, durable?: boolean): void;
  now(): number;
  /** Every op of every driver, for checking the arg names a scope constrains. */
  opParams?(): OpParams[];
}

/** The standing rules of one hub's config. */
export class StandingRules {
  #host: RulesHost;
  #confirmed: ConfirmedRules;

  constructor(host: RulesHost) {
    this.#host = host;
    this.#confirmed = new ConfirmedRules(dirname(host.config.path));
  }

  list(): StandingRuleStatus[] {
    const usage = this.#host.audit.ruleUsage();
    return this.#host.config.get().approvals.rules.map((r) => {
      const u = usage.get(r.id);
      return { ...r, proposed: !this.#confirmed.has(r), digest: ruleDigest(r), uses: u?.uses ?? 0, ...(u ? { last_used_at: u.last_used_at } : {}) };
    });
  }

  /**
   * Doctor lines about rules: how many wait for the operator, and a confirmation file that cannot
   * be read. Agents read doctor too (channel_doctor), so these say what waits, never how to confirm.
   */
  warnings(): string[] {
    const rules = this.#host.config.get().approvals.rules;
    const proposed = rules.filter((r) => !this.#confirmed.has(r)).length;
    const out = unmatchableRules(rules);
    const error = this.#confirmed.error();
    if (error) out.push(error);
    if (proposed)
      out.push(
        `${proposed} standing rule${proposed === 1 ? '' : 's'} in config.json ${proposed === 1 ? 'is' : 'are'} proposed, not in force — hint: the operator reviews proposed rules in the Uplink panel`,
      );
    return out;
  }

  /** Puts a proposed rule in force: only the exact content the operator saw (`digest`). */
  confirm(ruleId: string, digest: string, by: string): void {
    const rule = this.#rule(ruleId);
    if (ruleDigest(rule) !== digest) {
      throw new HubError('core', 'Rejected', `standing rule ${clipName(ruleId)} changed since the panel showed it`, {
        hint: 'review the rule as it is now, then confirm again',
      });
    }
    // Held to what the panel may make: a hand-written constraint on a sensitive arg is refused here.
    if (rule.args) checkArgConstraints(rule.args, coveredOps(this.#opParams(), { channel: rule.channel, ops: ruleOps(rule) }));
    this.#confirmed.change([rule], [], this.#host.config.get().approvals.rules);
    this.#ruleRecord(by, ruleId, `standing rule ${ruleId} confirmed: ${describeRule(rule)}`, true);
  }

  /** Rewrites a rule's scope (checked like a prompt's); the edited rule is in force. */
  update(ruleId: string, scope: RuleScope, by: string): void {
    const old = this.#rule(ruleId);
    checkRuleScope(scope, this.#opParams());
    const { channel: _c, op: _o, agent: _a, args: _g, ...rest } = old;
    const rule: StandingRule = { ...rest, ...this.fields(scope) };
    this.write(rule, old, `save standing rule ${ruleId}`);
    this.#ruleRecord(by, ruleId, `standing rule ${ruleId} edited: ${describeRule(rule)} (was ${describeRule(old)})`, true);
  }

  /** Removes a rule from config.json: a revoke, or the discard of a proposed one. */
  revoke(ruleId: string, by: string): void {
    const rule = this.#rule(ruleId);
    const proposed = !this.#confirmed.has(rule);
    editConfig(this.#host.config, (raw) => {
      const approvals = (raw.approvals ?? {}) as { rules?: StandingRule[] };
      approvals.rules = (approvals.rules ?? []).filter((r) => idOf(r) !== ruleId);
      raw.approvals = approvals;
    });
    try {
      this.#confirmed.change([], [rule]);
    } catch {
      // The rule is gone from config.json; a stale confirmation only matters if the same content returns.
    }
    this.#ruleRecord(by, ruleId, `standing rule ${ruleId} ${proposed ? 'discarded (it was proposed)' : 'revoked'}`, false);
  }

  #rule(ruleId: string): StandingRule {
    const rule = this.#host.config.get().approvals.rules.find((r) => r.id === ruleId);
    if (!rule)
      throw new HubError('core', 'NotFound', `no standing rule ${clipName(ruleId)}`, { hint: 'list the rules in the panel or in config.json approvals.rules' });
    return rule;
  }

  fields(scope: RuleScope): Pick<StandingRule, 'channel' | 'op' | 'agent' | 'args'> {
    return {
      channel: scope.channel,
      op: scope.ops.length === 1 ? scope.ops[0]! : scope.ops,
      ...(scope.agent !== undefined ? { agent: scope.agent } : {}),
      ...argsField(scope.args),
    };
  }

  #opParams(): OpParams[] {
    return this.#host.opParams?.() ?? [];
  }

  /**
   * Writes a rule made in the panel (replacing `old`, if any), confirmed before config.json is
   * written so the reload that follows finds it in force; nothing changes if either write fails.
   */
  write(rule: StandingRule, old: StandingRule | undefined, what: string): void {
    this.#confirmed.change([rule], old ? [old] : [], this.#host.config.get().approvals.rules);
    try {
      editConfig(
        this.#host.config,
        (raw) => {
          const approvals = (raw.approvals ?? {}) as { rules?: StandingRule[] };
          const rules = approvals.rules ?? [];
          approvals.rules = old ? rules.map((r) => (idOf(r) === old.id ? rule : r)) : [...rules, rule];
          raw.approvals = approvals;
        },
        what,
      );
    } catch (e) {
      try {
        this.#confirmed.change(old ? [old] : [], [rule]);
      } catch {
        // Left confirmed: harmless, since that exact rule is not in config.json.
      }
      throw e;
    }
  }

  #ruleRecord(by: string, ruleId: string, reason: string, granted: boolean): void {
    this.#host.record({ at: this.#host.now(), type: 'decision', kind: 'decision', authorized: 'operator', by, rule_id: ruleId, reason, granted }, true);
  }

  /**
   * A rule matches the channel's stable names only (its labels), never the address the call used:
   * pane and window ids are reused, so a rule on one could silently cover another target later.
   * Its agent is matched against the authenticated id, never the name a client declares.
   */
  match(ctx: CallContext): StandingRule | undefined {
    const agentId = authenticatedId(ctx);
    return this.#host.config
      .get()
      .approvals.rules.find(
        (r) =>
          coversChannel(r.channel, ctx.driver, ctx.labels) &&
          ruleOps(r).some((o) => globMatch(o, ctx.op)) &&
          (r.agent === undefined || (agentId !== undefined && globMatch(r.agent, agentId))) &&
          argsMatch(r.args, ctx.rawArgs, ctx.args) &&
          this.#confirmed.has(r),
      );
  }
}
