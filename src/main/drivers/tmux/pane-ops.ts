/**
 * The tmux ops (`read`, `await-idle`, `type`, `keys`, `label`, `ask`): the pane, then the guards
 * (own pane, read block, tier, read-first), then tmux. Args arrive validated against the op's
 * schema with its defaults filled in (by the kernel); only what a schema cannot say (one line of
 * text, known key names) is checked here.
 */
import { DriverError, type InvokeContext, type ReplyHint, type SendReceipt } from '../contract';
import type { JsonValue } from '../../kernel';
import { remember, type TmuxCore } from './core';
import type { PaneInfo } from './panes';
import { formatEnvelope, newCorrelationId, senderName } from './envelope';
import { classifyKey, configTier, grantHint, grantLabel, hasControlChars, paneName, requireReadable, tierRank, type Tier } from './policy';
import { awaitIdle, lastLines } from './watch';

/** Runs one op on a pane address (each op's own promise, not one wrapped around it: a read is a few hops shorter). */
export function runOp(
  core: TmuxCore,
  addr: string,
  op: string,
  rawArgs: JsonValue | undefined,
  ctx: InvokeContext | undefined,
  signal: AbortSignal | undefined,
): Promise<JsonValue> {
  const args = rawArgs as Args;
  switch (op) {
    case 'read':
      return read(core, addr, args);
    case 'await-idle':
      return idle(core, addr, args, signal);
    case 'type':
      return type(core, addr, args, ctx);
    case 'keys':
      return keys(core, addr, args, ctx);
    case 'label':
      return label(core, addr, args, ctx);
    case 'ask':
      return ask(core, addr, args, ctx, signal);
    default:
      return Promise.reject(new DriverError('NotFound', `tmux has no op "${op}"`, { hint: 'ops: read, await-idle, type, keys, label, ask (and send)' }));
  }
}

/**
 * The refusals of a writing op that touch nothing (text, tier, own pane, read-first, a rename
 * that would grant), run before the operator is asked. The same guards run again when the op acts.
 */
export async function precheckOp(core: TmuxCore, addr: string, op: string, rawArgs: JsonValue | undefined, ctx: InvokeContext | undefined): Promise<void> {
  const args = (rawArgs ?? {}) as Args;
  switch (op) {
    case 'send':
      await guardSend(core, addr, args.message, args.reply_hint, ctx);
      return;
    case 'type':
      await guardType(core, addr, args, ctx);
      return;
    case 'keys':
      await guardKeys(core, addr, args, ctx);
      return;
    case 'label':
      await guardLabel(core, addr, args, ctx);
      return;
    case 'ask':
      await guardAsk(core, addr, args, ctx);
      return;
    default:
      return;
  }
}

const REPLY_HINTS = ['full', 'short', 'none'] as const;

/**
 * The pane a `send` may go to: a non-empty one-line message to another pane at tier operator;
 * with the caller's own pane, which the envelope names.
 */
export async function guardSend(
  core: TmuxCore,
  addr: string,
  message: unknown,
  replyHint: unknown,
  ctx?: InvokeContext,
): Promise<{ pane: PaneInfo; own: string | undefined }> {
  requireSendable(message, replyHint);
  return gatedWithOwn(core, addr, 'send', ctx);
}

function requireSendable(message: unknown, replyHint: unknown): asserts message is string {
  if (typeof message !== 'string' || message.trim() === '') throw new DriverError('Invalid', 'send: message is required (a non-empty string)');
  requireOneLine(message, 'a message');
  const hint = replyHint ?? 'full';
  if (!(REPLY_HINTS as readonly unknown[]).includes(hint))
    throw new DriverError('Invalid', `send: reply_hint must be full, short or none (got "${String(hint)}")`);
}

/**
 * `send`: the envelope typed, verified on screen, then Enter. A pane this process has looked up
 * by id before is gated on that lookup, and typed into only if tmux, in the same step as a fresh
 * lookup, finds every field the gate read unchanged (`TmuxCore.deliver` with a lookup to confirm):
 * the decision a fresh lookup would get, one round trip sooner. What that earlier lookup would be
 * refused is not refused on its word: such a pane, like one not seen yet, is looked up first.
 */
export async function send(core: TmuxCore, addr: string, message: unknown, replyHint: unknown, ctx?: InvokeContext): Promise<SendReceipt> {
  const known = typeof addr === 'string' && isPaneId(addr) ? core.lastLookup(addr) : undefined;
  if (known) {
    requireSendable(message, replyHint);
    const own = await core.ownPane(ctx);
    let allowed = true;
    try {
      core.gateOwn(known.pane, 'send', 'operator', own);
    } catch {
      allowed = false;
    }
    if (allowed) {
      const { id, line } = envelopeFor(message, (replyHint as ReplyHint | undefined) ?? 'full', own, ctx);
      return core.deliver(known.pane, line, id, own, { gate: known.gate, what: 'send', needed: 'operator', ownPane: own });
    }
  }
  const { pane, own } = await guardSend(core, addr, message, replyHint, ctx);
  const { id, line } = envelopeFor(message as string, (replyHint as ReplyHint | undefined) ?? 'full', own, ctx);
  return core.deliver(pane, line, id, own);
}

/**
 * The pane, gated at operator for `what`, and the caller's own pane, looked up together: a caller
 * found by its pid costs a pane listing, which then shares the lookup's round trip.
 */
async function gatedWithOwn(core: TmuxCore, addr: string, what: string, ctx?: InvokeContext): Promise<{ pane: PaneInfo; own: string | undefined }> {
  const [pane, own] = await Promise.all([core.pane(addr), core.ownPane(ctx)]);
  core.gateOwn(pane, what, 'operator', own);
  return { pane, own };
}

/** A call's args, already validated and defaulted against the op's schema. */
type Args = Record<string, JsonValue>;

/** Rejects text that would become several lines or keystrokes. */
export function requireOneLine(text: string, what: string): void {
  if (hasControlChars(text)) {
    throw new DriverError('Invalid', `${what} must be one line of text (no newline, tab or other control characters)`, {
      hint: 'send one line per message; press special keys with the keys op',
    });
  }
}

async function read(core: TmuxCore, addr: string, args: Args): Promise<JsonValue> {
  const lines = args.lines as number;
  if (!isPaneId(addr)) {
    const pane = await core.pane(addr);
    requireReadable(core.decide(pane), 'read', pane);
    const text = (await core.capture(pane, lines)).join('\n');
    await core.markRead(pane.id);
    return { text };
  }
  // A pane id needs no lookup to be captured: the lookup (of what the read block decides on
  // only) and the capture go in one step, and (once the policy has allowed the read) the read
  // mark, one round trip in all instead of three. A refused read's capture is dropped here
  // unseen; a pane that is gone fails the step.
  const { marks, lines: captured } = await core.readMarksAndCapture(addr, lines);
  requireReadable(core.decide(marks), 'read', marks);
  const marking = core.markRead(marks.id);
  if (marking) await marking;
  return { text: captured.join('\n') };
}

function isPaneId(addr: string): boolean {
  return /^%\d+$/.test(addr);
}

/** Allowed on read-blocked panes: it reveals whether a pane is busy, never what it shows. */
async function idle(core: TmuxCore, addr: string, args: Args, signal?: AbortSignal): Promise<JsonValue> {
  const quietMs = args.quiet_ms as number;
  const timeoutMs = args.timeout_ms as number;
  const pane = await core.pane(addr);
  return { idle: await awaitIdle(core.probe(pane), quietMs, timeoutMs, signal) };
}

async function guardType(core: TmuxCore, addr: string, args: Args, ctx?: InvokeContext): Promise<PaneInfo> {
  requireOneLine(args.text as string, 'typed text');
  const pane = await core.pane(addr);
  await core.gate(pane, 'type', 'operator', ctx);
  core.requireRecentRead(pane, 'type');
  return pane;
}

async function type(core: TmuxCore, addr: string, args: Args, ctx?: InvokeContext): Promise<JsonValue> {
  const text = args.text as string;
  const enter = args.enter as boolean;
  const pane = await guardType(core, addr, args, ctx);
  // Fire-and-forget on purpose: raw consoles (password prompts, serial lines) do not echo.
  await core.exclusive(pane.id, async () => {
    await core.run(['send-keys', '-t', pane.id, '-l', '--', text]);
    if (enter) await core.run(['send-keys', '-t', pane.id, 'Enter']);
  });
  return { typed: [...text].length, enter };
}

async function guardKeys(core: TmuxCore, addr: string, args: Args, ctx?: InvokeContext): Promise<PaneInfo> {
  const names = args.keys as string[];
  const needed: Tier = names.map(classifyKey).includes('dangerous') ? 'godmode' : 'operator';
  const pane = await core.pane(addr);
  await core.gate(pane, needed === 'godmode' ? `keys ${names.filter((k) => classifyKey(k) === 'dangerous').join(' ')} (dangerous chord)` : 'keys', needed, ctx);
  core.requireRecentRead(pane, 'keys');
  return pane;
}

async function keys(core: TmuxCore, addr: string, args: Args, ctx?: InvokeContext): Promise<JsonValue> {
  const names = args.keys as string[];
  const pane = await guardKeys(core, addr, args, ctx);
  await core.exclusive(pane.id, () => core.run(['send-keys', '-t', pane.id, '--', ...names]));
  return { sent: names.length };
}

/**
 * Renames a pane. Gated at operator (except our own pane: naming oneself is identity). A rename
 * never raises a tier: it is refused when the new name would match a stronger `write_allow`
 * glob, and labels set here are marked `@uplink_agent_label` so they never grant anyway.
 */
async function guardLabel(core: TmuxCore, addr: string, args: Args, ctx?: InvokeContext): Promise<PaneInfo> {
  const name = args.name as string;
  requireOneLine(name, 'a label');
  const pane = await core.pane(addr);
  const own = pane.id === (await core.ownPane(ctx));
  const decision = own ? core.decide(pane) : await core.gate(pane, 'label', 'operator', ctx);
  const wouldGrant = configTier([pane.id, name], core.config());
  if (tierRank(wouldGrant) > tierRank(decision.tier)) {
    throw new DriverError('Rejected', `renaming ${paneName(pane)} to "${name}" would raise its tier to ${wouldGrant}; a rename can never raise a tier`, {
      hint: `pick another name; to raise the tier, ${grantHint(wouldGrant)}`,
    });
  }
  const holder = (await core.listPanes()).find((p) => p.label === name && p.id !== pane.id);
  if (holder)
    throw new DriverError('Rejected', `label "${name}" is already used by ${holder.id} (${holder.target})`, {
      hint: 'labels must be unique to be addressable; pick another name',
    });
  return pane;
}

async function label(core: TmuxCore, addr: string, args: Args, ctx?: InvokeContext): Promise<JsonValue> {
  const name = args.name as string;
  const pane = await guardLabel(core, addr, args, ctx);
  await core.run(['set-option', '-p', '-t', pane.id, '@uplink_first_label', grantLabel(pane) ?? '']);
  await core.run(['set-option', '-p', '-t', pane.id, '@uplink_agent_label', name]);
  await core.run(['set-option', '-p', '-t', pane.id, '@name', name]);
  core.noteLabel(pane.id, name);
  return { label: name };
}

/**
 * The envelope line and a fresh id for a message from the caller in pane `own`. `from:` is the
 * context's agent: the id the hub authenticated, never a name the client declared.
 */
export function envelopeFor(message: string, hint: 'full' | 'short' | 'none', own: string | undefined, ctx?: InvokeContext): { id: string; line: string } {
  const id = newCorrelationId();
  return { id, line: formatEnvelope(senderName(ctx?.agent), own, id, message, hint) };
}

/** send without reply block → await-idle → everything the peer printed after the question. */
async function guardAsk(core: TmuxCore, addr: string, args: Args, ctx?: InvokeContext): Promise<{ pane: PaneInfo; own: string | undefined }> {
  requireOneLine(args.message as string, 'an ask message');
  return gatedWithOwn(core, addr, 'ask', ctx);
}

async function ask(core: TmuxCore, addr: string, args: Args, ctx?: InvokeContext, signal?: AbortSignal): Promise<JsonValue> {
  const message = args.message as string;
  const quietMs = args.quiet_ms as number;
  const timeoutMs = args.timeout_ms as number;
  const started = Date.now();
  const { pane, own } = await guardAsk(core, addr, args, ctx);
  const { id, line } = envelopeFor(message, 'none', own, ctx);
  const receipt: SendReceipt = await core.deliver(pane, line, id, own);
  const idle = await awaitIdle(core.probe(pane), quietMs, Math.max(0, timeoutMs - (Date.now() - started)), signal);
  const after = await core.pane(pane.id);
  const back = Math.max(0, after.historySize - pane.historySize) + after.height + 5;
  const captured = (await core.probe(pane).capture(back)).map((l) => l.trimEnd());
  const at = captured.findIndex((l) => l.includes(`id:${id}`));
  const rest = at >= 0 ? captured.slice(at + 1) : captured;
  while (rest.length && rest[rest.length - 1] === '') rest.pop();
  await core.markRead(pane.id);
  remember(core.sentIds, id);
  const transcript = rest.join('\n');
  if (!idle) {
    throw new DriverError('Timeout', `${paneName(pane)} did not go quiet within ${timeoutMs} ms after the question (id:${id})`, {
      hint: 'the peer is still working or waits for its own operator — read the pane, or ask again with a larger timeout_ms',
      evidence: lastLines(rest, 20),
    });
  }
  return { transcript, receipt: { ...receipt } };
}
