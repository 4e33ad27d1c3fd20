/**
 * A call's context: who is asking and under which terms, built once by the hub before the call
 * starts and handed by the kernel (frozen) to the policy, the provider and the timeline. Nothing
 * downstream looks a caller up by invocation id or parses it back out of a string, and nothing
 * acts on a declared name: authority comes from `agent`, which only a credential sets.
 */
import type { JsonValue, OperationSafety, ProgressDetail } from '../kernel';
import type { CallerEnvironment } from '../drivers';
import type { ChannelAddress } from '../../shared/channel-address';
import type { AgentIdentity } from './types';

/** Who is asking, as a credential proved it. */
export interface AuthenticatedAgent {
  readonly kind: AgentIdentity['kind'];
  /** The credential's id: a named agent, `default`, `uplink-cli` or `operator`. */
  readonly id: string;
  /** The OS user (CLI) or the operator's name (panel). */
  readonly user?: string;
}

/** What the client said it is (MCP `clientInfo`): shown as declared, never trusted. */
export interface DeclaredClient {
  readonly name: string;
  readonly version?: string;
}

/** The immutable facts of one call. */
export interface CallContext {
  readonly invocation_id: string;
  readonly agent: AuthenticatedAgent;
  readonly declared: DeclaredClient;
  /** One connection (an MCP session); "approve for the session" grants are scoped to it. */
  readonly session?: string;
  /** Where the caller runs, as the hub established it (the process holding its connection); never a claim. */
  readonly caller?: CallerEnvironment;
  /** Who asked, in the audit record's form. */
  readonly recorded: AgentIdentity;
  readonly address: ChannelAddress;
  /** The channel as the caller wrote it (`address.channel`). */
  readonly channel: string;
  readonly driver: string;
  readonly op: string;
  readonly capability_id: string;
  readonly safety: OperationSafety;
  /** Redacted args (safe to store and show). */
  readonly args: JsonValue | undefined;
  /** Raw args, for `Driver.preview`, the precheck and the operator's Reveal only (never stored). */
  readonly rawArgs: JsonValue | undefined;
  readonly labels: readonly string[];
  readonly accepted_at: number;
  /** How long the driver may take to answer this call. */
  readonly deadline_ms: number;
  /** The args carry sensitive text: no output, evidence or detail is stored either. */
  readonly sensitive: boolean;
  /** Where the call's progress goes, when its caller wants it. */
  readonly progress?: (progress: ProgressDetail) => void;
}

/** The id of a caller no credential proved (rows from before agents authenticated); it matches no rule. */
export const UNAUTHENTICATED = 'unauthenticated';
/** The id (and name) of the command line's calls and of the hub's own records. */
export const CLI_AGENT_ID = 'uplink-cli';
/** The id (and name) of the operator deciding in the panel. */
export const OPERATOR_AGENT_ID = 'operator';

/** The authenticated agent behind an edge's identity; an MCP caller without a credential id is nobody. */
export function authenticatedAgent(identity: AgentIdentity): AuthenticatedAgent {
  const fallback = identity.kind === 'cli' ? CLI_AGENT_ID : identity.kind === 'panel' ? OPERATOR_AGENT_ID : UNAUTHENTICATED;
  const agent: { kind: AgentIdentity['kind']; id: string; user?: string } = { kind: identity.kind, id: identity.agent_id ?? fallback };
  if (identity.user !== undefined) agent.user = identity.user;
  return Object.freeze(agent);
}

/** The client's declared name and version, as declared. */
export function declaredClient(identity: AgentIdentity): DeclaredClient {
  return Object.freeze(identity.version === undefined ? { name: identity.name } : { name: identity.name, version: identity.version });
}
