/**
 * Public surface of the hub: what the edges (MCP, panel, CLI) and the Electron main import.
 * Importing it loads no SQLite, JSON Schema validator or driver: `createHub` and
 * `openAuditReader` load those when called, so the CLI forwarding a command to a running hub
 * starts in a fraction of the time a hub takes.
 */
import type { JsonSchema, JsonValue } from '../kernel';
import type { AuditStore } from './audit/store';
import type { AuditVerifyReport } from './audit/verify';
import { HubError } from './errors';
import type { CheckOptions, CheckResult } from './driver-admin/check';
import type { Hub } from './hub';
import type { HubOptions } from './hub-core';
import type { FleetInitOptions, FleetInitResult } from './fleet';

export type { Hub, DecideResult, ProviderView } from './hub';
export type * from './types';
export type { RuleScope } from './approvals';
export type { HubOptions } from './hub-core';
export { HubError, isDriverError, LIST_CHANNELS_HINT, toHubError } from './errors';
export { resolveDataDir, ensureDataDir, dataPaths, pidAlive } from './data-dir';
export { CLI_AGENT_ID, OPERATOR_AGENT_ID } from './call-context';
export { readSmallFile, writeFileAtomic } from './files';
export { CAPABILITY_VERSION, capabilitySpec, providerIdFor } from './channels/driver-provider';
export {
  CODE_TTL_MS,
  SESSION_IDLE_MS,
  SESSION_TTL_MS,
  createOperatorAuth,
  ensureToken,
  operatorKeyPath,
  panelSessionsPath,
  revokePanelSessionsAt,
  secretEquals,
} from './credentials';
export type { AgentCredential, AgentSummary, OperatorAuth, OperatorSession } from './credentials';
export { loadDrivers } from './driver-admin/default';
export type { DriverSet, LoadDrivers, SectionGetter } from './driver-admin/default';
export { MAX_MESSAGE_BYTES, MAX_OP_CHARS, checkBounds } from './bounds';

/** An op's default args checked against its schema (loads the validator only then: the CLI's forwarding path never does). */
export async function defaultArgsFor(schema: JsonSchema): Promise<{ args: Record<string, JsonValue> } | { problem: string }> {
  return (await import('./op-args')).defaultArgsFor(schema);
}

/**
 * Creates the hub of a data directory (see `HubOptions`). With a `fleet` section in its config it
 * joins that fleet; only then is the NATS client loaded.
 */
export async function createHub(options: HubOptions): Promise<Hub> {
  const core = await import('./hub-core');
  const hub = core.createHub(options);
  const fleet = core.fleetSettingsOf(hub);
  if (!fleet) return hub;
  return (await import('./fleet')).joinFleet(hub, fleet, { log: (line) => process.stderr.write(`${line}\n`) });
}

/** Serves one built-in driver over the driver protocol on stdio, its config read live; no hub. */
export async function runBuiltInDriver(name: string, dataDir: string): Promise<void> {
  return (await import('./driver-admin/run')).runBuiltInDriver(name, dataDir);
}

export type { CheckName, CheckOptions, CheckResult } from './driver-admin/check';

/** The driver conformance kit on a command (`uplink driver check`); it loads when called and starts no hub. */
export async function checkDriver(options: CheckOptions): Promise<CheckResult[]> {
  return (await import('./driver-admin/check')).checkDriver(options);
}

export type { FleetInitConfig, FleetInitOptions, FleetInitResult } from './fleet';

/** `uplink fleet init`: a fleet's keys, roster and NATS server config (loads the NATS client only then). */
export async function initFleet(options: FleetInitOptions): Promise<FleetInitResult> {
  return (await import('./fleet')).initFleet(options);
}

export type { AuditFinding, AuditVerifyReport } from './audit/verify';

/**
 * `uplink audit verify`: the audit at `path` checked read-only (chain, checkpoints, witnesses).
 * Throws a HubError when it cannot be checked at all (no file, cannot open, no chain yet).
 */
export async function verifyAudit(options: { path: string; witness?: readonly string[] }): Promise<AuditVerifyReport> {
  const { verifyAudit: verify, VerifyUnavailable } = await import('./audit/verify');
  try {
    return verify(options);
  } catch (e) {
    if (e instanceof VerifyUnavailable) throw new HubError('core', 'Unavailable', e.message, { hint: e.hint });
    throw e;
  }
}

/** Reading a data directory's audit log from outside its hub (`uplink log` with no hub running). */
export type AuditReader = Pick<AuditStore, 'query' | 'lastId' | 'close'>;

/** Opens the audit log at `path` for reading; close it when done. */
export async function openAuditReader(path: string): Promise<AuditReader> {
  return new (await import('./audit/store')).AuditStore(path);
}

// What the edges need of the kernel and the drivers, so that they never reach past the hub.
export type { CapabilityOffer, InteractionKind, JsonSchema, JsonValue, SelectionExplanation } from '../kernel';
export type {
  CallerEnvironment,
  ChannelEntry,
  DriverErrorKind,
  DriverInfo,
  ExternalStatus,
  RecvBatch,
  SendReceipt,
  TierSpec,
  TraceEntry,
  TraceFilter,
} from '../drivers';
export { DRIVER_ERROR_KINDS, DriverError, driverOfChannel, renderDriverError, tmuxSnippet } from '../drivers';
export { ChannelEntrySchema, DoctorReportSchema, INTERACTION_KINDS, OpSpecSchema, RecvBatchSchema, SendReceiptSchema } from '../drivers';
export { recordUnfinishedCalls } from './audit/unfinished';
