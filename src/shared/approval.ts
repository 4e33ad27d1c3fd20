/**
 * An approval prompt, declared once: the hub raises it, the fleet carries it to the other hubs
 * (which validate it on receipt, hence closed and bounded) and the panel shows it, all in this
 * shape with these field names.
 */
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { Closed, StringEnum } from './schema';
import { ApprovalPreview, InteractionKind, JsonValue } from './wire';

/** Where an agent came from. */
export const AGENT_KINDS = ['mcp', 'cli', 'panel'] as const;
export const AgentKind = StringEnum(AGENT_KINDS);
export type AgentKind = Static<typeof AgentKind>;

/** The decisions an operator can give a prompt. */
export const DECISIONS = ['once', 'session', 'always', 'deny'] as const;
export const Decision = StringEnum(DECISIONS);
export type Decision = Static<typeof Decision>;

const text = (maxLength: number) => Type.String({ maxLength });
/** Room for `<hub>/` before another hub's ids and channels. */
const HUB_PREFIX = 65;
const id = Type.String({ minLength: 1, maxLength: 128 + HUB_PREFIX });
const channel = Type.String({ minLength: 1, maxLength: 512 + HUB_PREFIX });

/**
 * Who asks, as a prompt names them: the audit record's agent plus the connection it asked in
 * (never where it runs: that stays in the hub).
 */
export const PromptAgent = Closed({
  kind: AgentKind,
  /** The authenticated agent (`default`, a named agent, `stdio`); absent when it did not authenticate. */
  agent_id: Type.Optional(text(256)),
  /** The client name the agent declared (shown beside the id, never trusted), or `uplink-cli` / `operator`. */
  name: text(256),
  version: Type.Optional(text(256)),
  /** The OS user (CLI) or the operator's name (panel). */
  user: Type.Optional(text(256)),
  /** One connection (an MCP session). */
  session: Type.Optional(text(256)),
});
export type PromptAgent = Static<typeof PromptAgent>;

/**
 * Why approving a prompt now would fail anyway (the driver's precheck, run again while it waits
 * and when the operator approves): an approval is held back while this is set.
 */
export const WouldFail = Closed({
  reason: text(2000),
  hint: Type.Optional(text(2000)),
  /** When the hub last checked (ms since the epoch). */
  checked_at: Type.Integer({ minimum: 0 }),
});
export type WouldFail = Static<typeof WouldFail>;

/** A mutating request waiting for the operator. Sensitive args arrive redacted. */
export const PendingApproval = Closed({
  approval_id: id,
  invocation_id: id,
  agent: PromptAgent,
  channel,
  channel_labels: Type.Array(text(512), { maxItems: 256 }),
  op: text(128),
  capability_id: text(256),
  /** Args in full, except sensitive fields shown as `•••• (sensitive, N chars)`. */
  args: JsonValue,
  /** `args` has sensitive text redacted; `revealApprovalArgs` shows it to the operator. */
  sensitive: Type.Optional(Type.Boolean()),
  /** The args `args` shows redacted (never what their text looks like): a scope may not constrain them. */
  redacted_args: Type.Optional(Type.Array(text(128), { maxItems: 64 })),
  provider_id: text(256),
  interaction: InteractionKind,
  /** When the agent asked (ms since the epoch). */
  requested_at: Type.Integer({ minimum: 0 }),
  /** When it is denied unanswered (ms since the epoch). */
  expires_at: Type.Integer({ minimum: 0 }),
  /** The stable channel name an "always" covers by default; absent when the channel has no label. */
  rule_channel: Type.Optional(text(512)),
  /** What the op will do, in words and (desktop) a fresh screenshot with a mark; best effort, bounded in time. */
  preview: Type.Optional(ApprovalPreview),
  /** Set while approving would fail (a guard such as the read-first one no longer holds): see `WouldFail`. */
  would_fail: Type.Optional(WouldFail),
  /**
   * The fleet hub that owns this prompt, when it is another one: `approval_id` and `channel` are
   * then `<hub>/…`, and this hub can only pass on an approve-once or a deny (the owner records
   * and enforces it). Never on a prompt as it travels.
   */
  hub: Type.Optional(Type.String({ pattern: '^[a-z][a-z0-9-]*$', maxLength: 64 })),
});
export type PendingApproval = Static<typeof PendingApproval>;
