/**
 * The immutable facts of one call that the kernel request does not carry: who asked, which
 * channel/op, its labels, the redacted args (and the raw ones, for the preview and the operator's
 * Reveal only), and whether they are sensitive. Written once by the hub before the call starts,
 * read by the broker (policy), the driver provider (who is asking) and the timeline projection.
 * Outcomes are not here: they come from the kernel (`wait`, `peek`, `diagnostic`) and the broker
 * (`denial`). Keyed by invocation id.
 */
import type { JsonValue, OperationSafety } from '../kernel';
import type { AgentIdentity } from './types';

/** Hub-side facts of one invocation; never changed after the call starts. */
export interface CallContext {
  readonly invocation_id: string;
  readonly channel: string;
  readonly driver: string;
  readonly op: string;
  readonly capability_id: string;
  readonly safety: OperationSafety;
  readonly agent: AgentIdentity;
  /** Redacted args (safe to store and show). */
  readonly args: JsonValue | undefined;
  /** Raw args, for `Driver.preview` and the operator's Reveal only (never stored). */
  readonly rawArgs: JsonValue | undefined;
  readonly labels: readonly string[];
  readonly accepted_at: number;
  /** The args carry sensitive text: no output, evidence or detail is stored either. */
  readonly sensitive: boolean;
}

/** The calls in flight. */
export class CallTable {
  #calls = new Map<string, CallContext>();

  add(ctx: CallContext): void {
    this.#calls.set(ctx.invocation_id, ctx);
  }

  get(invocationId: string): CallContext | undefined {
    return this.#calls.get(invocationId);
  }

  delete(invocationId: string): void {
    this.#calls.delete(invocationId);
  }
}
