/**
 * What a session grant or a standing rule may cover: channel, op and agent scopes as an operator
 * writes them, checked by the hub (the panel is not trusted), and what "always" and "for the
 * session" derive from the call being decided. Never a reusable id, never a declared name.
 */
import { globMatch } from '../../drivers';
import { describeArgs, scopeInWords } from '../../../shared/arg-constraints';
import type { CallContext } from '../call-context';
import { UNAUTHENTICATED } from '../call-context';
import { HubError } from '../errors';
import type { ApprovalScope, ArgConstraints, StandingRule } from '../types';
import { argsMatch, checkArgConstraints } from './arg-constraints';
import type { OpParams } from './arg-constraints';

/** A channel address that is a reusable id: a tmux pane (`%3`) or a desktop window (`0x3a00007`, `a11y-…`). */
export const REUSABLE_ID = /^(%|0x[0-9a-f]|a11y-)/i;

/** Whether a rule's channel pattern names a reusable id (such a rule never matches). */
export function namesReusableId(pattern: string): boolean {
  const colon = pattern.indexOf(':');
  return colon >= 0 && REUSABLE_ID.test(pattern.slice(colon + 1));
}

/**
 * Whether a rule's channel pattern covers a channel. A pattern whose address is only `*` (`tmux:*`,
 * `*`) covers every channel of the drivers it names, labelled or not: it names no target. Any other
 * pattern is matched against the channel's labels, never its address.
 */
export function coversChannel(pattern: string, driver: string, labels: readonly string[]): boolean {
  const colon = pattern.indexOf(':');
  const addr = colon >= 0 ? pattern.slice(colon + 1) : pattern;
  if (/^\*+$/.test(addr)) return colon < 0 || globMatch(pattern.slice(0, colon), driver);
  if (REUSABLE_ID.test(addr)) return false;
  return labels.some((l) => globMatch(pattern, `${driver}:${l}`));
}

/** A rule's scope in words, for the audit (the panel words it the same way). */
export function describeRule(r: Pick<StandingRule, 'channel' | 'op' | 'agent' | 'args'>): string {
  return scopeInWords({ ...r, ops: ruleOps(r) });
}

/** Rules that can never match, as doctor lines the operator can act on. */
export function unmatchableRules(rules: readonly StandingRule[]): string[] {
  return rules
    .filter((r) => namesReusableId(r.channel))
    .map(
      (r) =>
        `standing rule ${r.id} names ${r.channel}, a reusable id, and never matches — hint: label the target and name the label instead (e.g. tmux:<@name>)`,
    );
}

/** The op globs of a rule. */
export function ruleOps(rule: Pick<StandingRule, 'op'>): string[] {
  return Array.isArray(rule.op) ? rule.op : [rule.op];
}

// eslint-disable-next-line no-control-regex -- a label may hold spaces, never control characters
const CHANNEL_SCOPE = /^[a-z][a-z0-9-]*:[^\u0000-\u001f\u007f]{1,200}$/;
const OP_SCOPE = /^[A-Za-z0-9_.*?-]{1,128}$/;
const AGENT_SCOPE = /^[A-Za-z0-9_.@*?-]{1,128}$/;
const MAX_SCOPE_OPS = 32;

/** A channel pattern an operator may grant on: `<driver>:<label or glob>`, never a reusable id. */
export function checkChannelScope(channel: string): void {
  if (!CHANNEL_SCOPE.test(channel)) {
    throw new HubError('core', 'Invalid', `channel ${JSON.stringify(channel.slice(0, 80))} is not a <driver>:<label or glob>`, {
      hint: 'name a label or a glob over labels, e.g. tmux:build-*',
    });
  }
  if (namesReusableId(channel)) {
    throw new HubError('core', 'Invalid', `channel ${channel} names a reusable id, which can belong to another target later`, {
      hint: 'name the target by its label instead (label it first if it has none)',
    });
  }
}

export function checkOpsScope(ops: readonly string[]): void {
  if (ops.length === 0 || ops.length > MAX_SCOPE_OPS)
    throw new HubError('core', 'Invalid', `a scope names 1 to ${MAX_SCOPE_OPS} ops, not ${ops.length}`, { hint: 'list the ops to cover, e.g. write, send' });
  const bad = ops.find((o) => !OP_SCOPE.test(o));
  if (bad !== undefined)
    throw new HubError('core', 'Invalid', `op ${JSON.stringify(bad.slice(0, 80))} is not an op name or glob`, {
      hint: 'use letters, digits, _ . - and the globs * ?',
    });
}

/** A rule's scope as the panel edits it: checked like a scope chosen on a prompt. */
export interface RuleScope {
  channel: string;
  ops: string[];
  /** Glob on the authenticated agent id; absent = any agent. */
  agent?: string;
  /** Covers only calls whose args meet these; absent = any args. */
  args?: ArgConstraints;
}

export function checkRuleScope(scope: RuleScope, ops: OpParams[]): void {
  checkChannelScope(scope.channel);
  checkOpsScope(scope.ops);
  if (scope.agent !== undefined && !AGENT_SCOPE.test(scope.agent)) {
    throw new HubError('core', 'Invalid', `agent ${JSON.stringify(scope.agent.slice(0, 80))} is not an agent id or glob`, {
      hint: 'name an agent id from Agents, or choose any agent',
    });
  }
  if (scope.args) checkArgConstraints(scope.args, coveredOps(ops, scope));
}

/** The ops a scope covers, of the drivers its channel names. */
export function coveredOps(ops: readonly OpParams[], scope: Pick<RuleScope, 'channel' | 'ops'>): OpParams[] {
  const colon = scope.channel.indexOf(':');
  const driver = colon >= 0 ? scope.channel.slice(0, colon) : '*';
  return ops.filter((o) => globMatch(driver, o.driver) && scope.ops.some((g) => globMatch(g, o.op)));
}

/** Arg names the request being decided shows redacted: sensitive in this call, so never constrained. */
export function redactedNames(ctx: CallContext): string[] {
  const raw = ctx.rawArgs;
  const shown = ctx.args;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw) || !shown || typeof shown !== 'object' || Array.isArray(shown)) return [];
  return Object.keys(raw).filter((k) => JSON.stringify(raw[k]) !== JSON.stringify(shown[k]));
}

/** The prompt's list of redacted args, when there are any. */
export function redactedField(ctx: CallContext): { redacted_args?: string[] } {
  const names = redactedNames(ctx);
  return names.length ? { redacted_args: names } : {};
}

/** Empty constraints constrain nothing: leave them out so the rule reads, and digests, as without. */
export function argsField(args: ArgConstraints | undefined): { args?: ArgConstraints } {
  return args && Object.keys(args).length > 0 ? { args } : {};
}

/**
 * What an "Always" rule covers: the deciding request's authenticated agent and one stable name of
 * its channel (the label the call used, else the first). Refused (the prompt stays open) when
 * either is missing, since a rule on a reusable id or a declared name would cover someone else.
 */
export function alwaysAgent(ctx: CallContext): string {
  const agent = authenticatedId(ctx);
  if (agent === undefined) {
    throw new HubError('core', 'Rejected', `cannot approve always: the request's agent did not authenticate`, {
      hint: 'approve once or for the session instead',
    });
  }
  return agent;
}

/** The agent id a credential proved, if one did. */
export function authenticatedId(ctx: CallContext): string | undefined {
  return ctx.agent.id === UNAUTHENTICATED ? undefined : ctx.agent.id;
}

export function alwaysChannel(ctx: CallContext): string {
  const addr = ctx.address.addr;
  const stable = ctx.labels.filter((l) => !/[*?]/.test(l) && !REUSABLE_ID.test(l));
  const label = stable.includes(addr) ? addr : stable[0];
  if (label === undefined) {
    const how = ctx.driver === 'tmux' ? `label the pane (\`tmux set -p -t ${addr} @name <name>\`)` : 'give the target a stable label';
    throw new HubError(
      'core',
      'Rejected',
      `cannot approve always on ${ctx.channel}: it has no stable label, and its id can be reused by another target later`,
      {
        hint: `${how}, or approve once or for the session instead`,
      },
    );
  }
  return `${ctx.driver}:${label}`;
}

/**
 * The scope a session grant or rule gets from the operator's choice, checked by the hub (the
 * panel is not trusted): well-formed, no reusable id, and covering the call being decided.
 */
export function decidedScope(ctx: CallContext, kind: 'session' | 'always', scope: ApprovalScope, ops: OpParams[]): RuleScope {
  if (kind === 'session' && scope.agent === 'any') {
    throw new HubError('core', 'Invalid', 'a session grant covers this agent only', { hint: 'choose "always" to cover any agent' });
  }
  const agent = kind === 'always' && scope.agent !== 'any' ? alwaysAgent(ctx) : undefined;
  const opGlobs = scope.ops ?? [ctx.op];
  checkOpsScope(opGlobs);
  if (!opGlobs.some((o) => globMatch(o, ctx.op)))
    throw new HubError('core', 'Invalid', `the ops ${opGlobs.join(', ')} do not include ${ctx.op}, the op being decided`, { hint: `add ${ctx.op}` });
  // A session grant may stay on the address the call used: it ends with the session.
  let channel = scope.channel ?? (kind === 'session' ? ctx.channel : alwaysChannel(ctx));
  if (channel !== ctx.channel || kind === 'always') {
    channel = channel.trim();
    checkChannelScope(channel);
    if (!coversChannel(channel, ctx.driver, ctx.labels)) {
      throw new HubError(
        'core',
        'Invalid',
        `${channel} does not cover ${ctx.channel}${ctx.labels.length ? ` (labels: ${ctx.labels.join(', ')})` : ' (it has no label)'}`,
        { hint: 'choose a pattern that matches one of its labels' },
      );
    }
  }
  const args = argsField(scope.args).args;
  if (args) {
    checkArgConstraints(args, coveredOps(ops, { channel, ops: opGlobs }), redactedNames(ctx));
    if (!argsMatch(args, ctx.rawArgs, ctx.args)) {
      throw new HubError('core', 'Invalid', `the request's args do not meet ${describeArgs(args).slice(0, 200)}`, {
        hint: 'start from the args the request shows, and loosen strings with * and ?',
      });
    }
  }
  return { channel, ops: opGlobs, ...(agent !== undefined ? { agent } : {}), ...(args ? { args } : {}) };
}
