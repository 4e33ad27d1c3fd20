/**
 * A denial as the agent hears it: a `HubError`, handed to the kernel as the cause of its
 * `policy_denied`, so the agent's error is this value and never text parsed back.
 */
import type { CallContext } from '../call-context';
import { HubError } from '../errors';

/** Why the broker denied a call: what the agent is told, and what it can do. */
export interface Denial {
  reason: string;
  hint?: string;
  /** Nobody refused: the hub stopped while the prompt waited (the agent should retry later). */
  unavailable?: boolean;
  /** The driver refused before anyone was asked: the agent gets the driver's own error. */
  error?: HubError;
  /** Nobody answered in time. */
  timedOut?: boolean;
}

/**
 * What an agent is told to do when nobody approved its call. Never how to approve itself: a rule
 * is the operator's to make, in the panel.
 */
export const AGENT_ASK_HINT = 'ask the operator to open the Uplink panel and approve it, then retry';

/**
 * The error a denial gives the agent. It reaches the hub as the cause of the kernel's
 * `policy_denied`, so what the agent hears is this value, not text parsed back.
 */
export function denialError(ctx: CallContext, d: Denial): HubError {
  if (d.error) return d.error;
  const options = { ...(d.hint ? { hint: d.hint } : {}), code: 'policy_denied' as const };
  // Nobody refused a prompt the stopping hub withdrew: the agent should retry later, not give up.
  if (d.unavailable) return new HubError('core', 'Unavailable', d.reason, { ...options, outcome: 'denied' });
  // A prompt nobody decided is a timeout, not a refusal: `[<driver>:Timeout] … timed out …`.
  if (d.timedOut) return new HubError(ctx.driver, 'Timeout', d.reason, { ...options, outcome: 'timed_out' });
  return new HubError(ctx.driver, 'Rejected', d.reason, options);
}
