/**
 * The default policy and the fail-closed reading of whatever a policy returns: anything that is
 * not exactly a permit, a deny or an ask with a thenable approval counts as a deny.
 */
import { clip } from './errors';
import type { ApprovalDetail, ApprovalOutcome, Policy, PolicyDecision } from './types';

const PERMIT: PolicyDecision = Object.freeze({ kind: 'permit' });
const DENY_MUTATING: PolicyDecision = Object.freeze({ kind: 'deny', reason: 'the default policy denies mutating capabilities' });

/** Permits `read_only` capabilities and denies `mutating` ones (docs/kernel.md, guarantee 3). */
export const defaultPolicy: Policy = (ctx) => (ctx.offer.capability.safety === 'read_only' ? PERMIT : DENY_MUTATING);

/** A decision after checking; `invalid` means the policy broke its contract (fail closed). */
export type CheckedDecision =
  { kind: 'permit' } | { kind: 'deny'; reason: string | undefined; cause: unknown } | { kind: 'ask'; approval: Promise<ApprovalOutcome> } | { kind: 'invalid' };

const INVALID: CheckedDecision = { kind: 'invalid' };

/** Reads a policy's return value defensively (getters may throw; the reason may be no string). */
export function checkDecision(value: unknown): CheckedDecision {
  try {
    if (value === null || typeof value !== 'object') return INVALID;
    const decision = value as Record<string, unknown>;
    switch (decision.kind) {
      case 'permit':
        return PERMIT as CheckedDecision;
      case 'deny':
        return {
          kind: 'deny',
          reason: typeof decision.reason === 'string' && decision.reason !== '' ? clip(decision.reason) : undefined,
          cause: decision.cause,
        };
      case 'ask': {
        const approval = decision.approval;
        if (approval === null || (typeof approval !== 'object' && typeof approval !== 'function')) return INVALID;
        if (typeof (approval as { then?: unknown }).then !== 'function') return INVALID;
        return { kind: 'ask', approval: Promise.resolve(approval as PromiseLike<ApprovalOutcome>) };
      }
      default:
        return INVALID;
    }
  } catch {
    return INVALID;
  }
}

/** An approval outcome after checking: granted only when `granted` is exactly `true`. */
export interface CheckedOutcome {
  granted: boolean;
  detail: ApprovalDetail;
  /** Why it was not granted, as the policy's host put it (kept for the host, never for an agent). */
  cause?: unknown;
}

/** Reads an approval outcome defensively; anything malformed is a denial. */
export function checkOutcome(value: unknown): CheckedOutcome {
  try {
    if (value === null || typeof value !== 'object') return { granted: false, detail: {} };
    const outcome = value as Record<string, unknown>;
    const detail: ApprovalDetail = {};
    if (typeof outcome.by === 'string' && outcome.by !== '') detail.by = clip(outcome.by);
    if (typeof outcome.reason === 'string' && outcome.reason !== '') detail.reason = clip(outcome.reason);
    // Frozen: events share it, and a caller mutating one must not rewrite the recorded history.
    const checked: CheckedOutcome = { granted: outcome.granted === true, detail: Object.freeze(detail) };
    if (outcome.cause !== undefined) checked.cause = outcome.cause;
    return checked;
  } catch {
    return { granted: false, detail: {} };
  }
}
