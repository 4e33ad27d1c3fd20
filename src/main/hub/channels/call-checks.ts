/**
 * What the hub checks before a call becomes a kernel invocation: the op exists, the caller used
 * the right class, args are an object, the channel exists — and, for
 * drivers that know which interaction kinds can serve a channel right now (desktop:
 * `interactionsFor`), which kind the kernel may select.
 */
import { INTERACTION_KINDS } from '../../kernel';
import type { InteractionKind, JsonValue } from '../../kernel';
import { driverOfChannel } from '../../drivers';
import { HubError } from '../errors';
import type { ChannelRegistry } from './registry';
import { withDeadline } from './registry';
import type { CallOptions, OpDescription } from '../types';
import type { ChannelAddress } from '../../../shared/channel-address';

/** A call that passed the checks. */
export interface CheckedCall {
  spec: OpDescription;
  address: ChannelAddress;
  labels: string[];
  /** The interaction constraint to pass to the kernel (the caller's, or the one the driver allows). */
  interaction?: InteractionKind;
}

/** Runs the checks; throws the HubError the caller gets (the hub records it as rejected). */
export async function checkCall(
  registry: ChannelRegistry,
  channel: string,
  op: string,
  args: JsonValue,
  options: CallOptions,
  timeoutMs: number,
): Promise<CheckedCall> {
  const driverName = driverOfChannel(channel);
  await registry.ready(channel);
  const spec = registry.op(channel, op);
  const { driver, addr, address } = registry.resolve(channel);
  if (options.expect && (options.expect === 'mutating') !== spec.mutating) {
    const wrong = options.expect === 'mutating' ? 'channel_act' : 'channel_observe';
    throw new HubError(driverName, 'Invalid', `${op} is ${spec.mutating ? 'mutating' : 'read-only'}; call it with ${spec.tool}, not ${wrong}`, {
      hint: `use the ${spec.tool} tool`,
    });
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    throw new HubError(driverName, 'Invalid', `args for ${op} must be a JSON object`, { hint: `see channel_describe {channel: "${channel}", op: "${op}"}` });
  }
  // Refused before the kernel ever sees it: a "true" would read as "not sensitive" to a driver.
  if ('sensitive' in args && typeof args.sensitive !== 'boolean') {
    throw new HubError(
      driverName,
      'Invalid',
      `args.sensitive for ${op} must be true or false, not a ${args.sensitive === null ? 'null' : Array.isArray(args.sensitive) ? 'list' : typeof args.sensitive}`,
      { hint: 'pass "sensitive": true to keep the text out of the audit' },
    );
  }
  if (op === 'recv') return { spec, address, labels: [], ...(options.interaction ? { interaction: options.interaction } : {}) };
  const labels = (await registry.find(channel)).labels;
  const checked: CheckedCall = { spec, address, labels, ...(options.interaction ? { interaction: options.interaction } : {}) };
  const { interactionsFor } = driver;
  if (typeof interactionsFor !== 'function' || spec.interactions.length < 2 || options.provider) return checked;
  const available = await withDeadline(driverName, 'interactionsFor()', timeoutMs, () => interactionsFor.call(driver, addr));
  const usable = INTERACTION_KINDS.filter((k) => spec.interactions.includes(k) && available.includes(k));
  if (options.interaction) {
    if (!usable.includes(options.interaction)) {
      throw new HubError(
        driverName,
        'Unavailable',
        `${channel} cannot be driven through ${options.interaction} now (available: ${usable.join(', ') || 'none'})`,
        { hint: usable.length ? `use interaction ${usable[0]}` : 'run `uplink doctor`' },
      );
    }
    return checked;
  }
  if (usable.length === 0) {
    throw new HubError(driverName, 'Unavailable', `nothing can drive ${channel} through ${op} now (no ${spec.interactions.join(' or ')})`, {
      hint: 'run `uplink doctor` to see what is missing',
    });
  }
  return { ...checked, interaction: usable[0]! };
}
