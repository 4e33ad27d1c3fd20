/**
 * What the hub knows about one call beyond the kernel request: who asked, which channel/op, the
 * redacted args, and the outcome details the kernel's fixed wire errors cannot carry (deny reason,
 * the driver's own DriverError, operator-only detail). Keyed by invocation id.
 */
import type { InteractionKind, JsonValue, OperationSafety } from '../kernel/types';
import type { DriverError } from '../drivers/contract';
import type { AgentIdentity, Authorization } from './types';

/** Hub-side facts of one invocation. */
export interface CallContext {
  invocation_id: string;
  channel: string;
  driver: string;
  op: string;
  capability_id: string;
  safety: OperationSafety;
  agent: AgentIdentity;
  /** Redacted args (safe to store and show). */
  args: JsonValue | undefined;
  /** Raw args, for `Driver.preview` only (never stored). */
  rawArgs: JsonValue | undefined;
  labels: string[];
  accepted_at: number;
  provider_id?: string;
  interaction?: InteractionKind;
  /** Set by the broker when it denies: what the agent is told (`unavailable`: nobody refused, the hub went away). */
  deny?: { reason: string; hint?: string; unavailable?: boolean };
  /** Set by the provider when the driver threw a DriverError (contract error, meant for the agent). */
  driverError?: DriverError;
  /** Set by the provider for unexpected throws: operator-only detail. */
  detail?: string;
  /** Set by the provider: what the driver returned (stored on the `succeeded` entry unless sensitive). */
  output?: JsonValue;
  /** For read-only permits: how it was authorized (stored on the `accepted` entry). */
  authorized?: Authorization;
  /** Set while waiting for the operator. */
  approval_id?: string;
  /** The args carry sensitive text: no evidence or detail is stored either. */
  sensitive?: boolean;
  /** The provider was called (approval over). */
  started?: boolean;
  /** Forwards kernel `progress` events to the caller. */
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

/** The live table of call contexts. */
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

  all(): CallContext[] {
    return [...this.#calls.values()];
  }
}
