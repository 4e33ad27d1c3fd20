/**
 * Op ↔ capability mapping: each driver becomes one kernel provider per interaction kind
 * (`uplink/<driver>`, `uplink/<driver>-semantic`, `uplink/<driver>-visual`), each op a capability
 * `<driver>.<op>@1.0.0` with input `{channel, args}`. The provider's `invoke` is the only code
 * that calls a driver's `invoke`/`send`/`recv`; it gives every call its context's deadline and
 * tells the driver who asks from the context (the authenticated agent). A driver's own DriverError
 * reaches the hub as the cause on the kernel's host snapshot, since the kernel's wire error is
 * fixed text.
 */
import type {
  CapabilityProvider,
  CapabilitySpec,
  InteractionKind,
  JsonValue,
  ProviderCall,
  ProviderCapability,
  ProviderDescriptor,
  ProviderOutput,
} from '../../kernel';
// The messaging half's params and results are the driver protocol's own schemas.
import {
  DriverError,
  isMutating,
  RecvBatchSchema as RECV_RESULT,
  RecvRequestSchema as RECV_PARAMS,
  SendReceiptSchema as SEND_RESULT,
  SendRequestSchema as SEND_PARAMS,
} from '../../drivers';
import type { Driver, InvokeContext, OpSpec, ReplyHint } from '../../drivers';
import type { CallContext } from '../call-context';
import { Deadlines } from './deadlines';

/** The deadlines of every driver call in this process, on one timer. */
const DEADLINES = new Deadlines();

/** The capability version every driver op gets. */
export const CAPABILITY_VERSION = '1.0.0';
/** Op names the hub reserves for the messaging half of the contract. */
export const RESERVED_OPS = ['send', 'recv'] as const;

/** The provider id for a driver and interaction kind. */
export function providerIdFor(driver: string, interaction: InteractionKind): string {
  switch (interaction) {
    case 'typed':
      return `uplink/${driver}`;
    case 'semantic_ui':
      return `uplink/${driver}-semantic`;
    case 'visual_ui':
      return `uplink/${driver}-visual`;
    default: {
      const never: never = interaction;
      return never;
    }
  }
}

/** The capability spec of one op. */
export function capabilitySpec(driver: string, op: OpSpec): CapabilitySpec {
  return {
    id: `${driver}.${op.op}`,
    version: CAPABILITY_VERSION,
    title: `${driver} ${op.op}`,
    description: op.summary,
    input_schema: {
      type: 'object',
      properties: { channel: { type: 'string' }, args: op.params_schema },
      required: ['channel', 'args'],
      additionalProperties: false,
    },
    output_schema: op.result_schema,
    safety: isMutating(op) ? 'mutating' : 'read_only',
  };
}

/** The ops the hub itself adds for messaging drivers: `send` (mutating) and `recv` (read-only). */
export function messagingOps(driver: Driver): OpSpec[] {
  const kind = driver.info().kind;
  if (kind === 'capability') return [];
  return [
    { op: 'send', summary: 'Send a message to the channel (SendReceipt)', mutating: true, params_schema: SEND_PARAMS, result_schema: SEND_RESULT },
    {
      op: 'recv',
      summary: 'Read replies and envelopes seen on the driver since a cursor',
      mutating: false,
      params_schema: RECV_PARAMS,
      result_schema: RECV_RESULT,
    },
  ];
}

/** The kernel provider for one (driver, interaction kind). */
export class DriverProvider implements CapabilityProvider<CallContext> {
  readonly driverId: string;
  readonly interaction: InteractionKind;
  #driver: Driver;
  #ops: OpSpec[];

  constructor(driver: Driver, interaction: InteractionKind, ops: OpSpec[]) {
    this.#driver = driver;
    this.driverId = driver.info().id;
    this.interaction = interaction;
    this.#ops = ops;
  }

  descriptor(): ProviderDescriptor {
    const info = this.#driver.info();
    return { id: providerIdFor(info.id, this.interaction), version: CAPABILITY_VERSION, name: `${info.id} (${this.interaction})`, description: info.summary };
  }

  capabilities(): ProviderCapability[] {
    return this.#ops.map((op) => ({ spec: capabilitySpec(this.driverId, op), interactions: [this.interaction] }));
  }

  invoke(call: ProviderCall<CallContext>, signal: AbortSignal): Promise<ProviderOutput> {
    // The kernel validated this input against the op's schema and filled in its defaults: the
    // driver gets exactly that, never the agent's raw args.
    const input = call.request.input as { channel: string; args: JsonValue };
    const ctx = call.context;
    const op = ctx.op;
    const addr = ctx.address.addr;
    const ms = ctx.deadline_ms;
    const invokeCtx: InvokeContext = {
      interaction: call.offer.interaction,
      agent: ctx.agent.id,
      invocation_id: ctx.invocation_id,
      ...(ctx.caller ? { caller: ctx.caller } : {}),
      deadline_ms: ms,
    };
    // The driver gets the kernel's signal itself (a cancel aborts it) and the deadline aborts that
    // same signal: one AbortSignal per call and no listener linking two (each costs microseconds).
    return new Promise<ProviderOutput>((resolve, reject) => {
      const cancelDeadline = DEADLINES.add(ms, () => {
        call.abort?.(new Error('deadline'));
        reject(
          new DriverError('Timeout', `${this.driverId}.${op} did not finish within ${Math.round(ms / 1000)} s`, {
            hint: 'the driver may be stuck; run `uplink doctor`, then retry',
          }),
        );
      });
      this.#run(op, addr, input.args, invokeCtx, signal).then(
        (output) => {
          cancelDeadline();
          resolve({ output });
        },
        (error: unknown) => {
          cancelDeadline();
          reject(error);
        },
      );
    });
  }

  async #run(op: string, addr: string, args: JsonValue, ctx: InvokeContext, signal: AbortSignal): Promise<JsonValue> {
    if (op === 'send') {
      const a = args as { message: string; reply_hint: ReplyHint };
      return (await this.#driver.send(addr, { message: a.message, reply_hint: a.reply_hint }, ctx, signal)) as unknown as JsonValue;
    }
    if (op === 'recv') {
      const a = args as { cursor?: number };
      return (await this.#driver.recv(a.cursor)) as unknown as JsonValue;
    }
    return this.#driver.invoke(addr, op, args, ctx, signal);
  }
}
