/** Public surface of the hub: what the edges (MCP, panel, CLI, Electron main) import. */
export type { Hub, DecideResult, ProviderView } from './hub';
export type * from './types';
export { createHub } from './hub-core';
export type { HubOptions } from './hub-core';
export { HubError, isDriverError, LIST_CHANNELS_HINT, toHubError } from './errors';
export { resolveDataDir, ensureDataDir, dataPaths } from './data-dir';
export { MAX_MESSAGE_BYTES, CAPABILITY_VERSION, capabilitySpec, providerIdFor } from './driver-provider';
export { DEFAULT_APPROVAL_TIMEOUT_MS, DEFAULT_DRIVER_TIMEOUT_MS } from './config';
export type { AgentCredential, AgentSummary } from './agent-credentials';
export { loadDrivers } from './default-drivers';
export type { DriverSet, SectionGetter } from './default-drivers';
export { MAX_OP_CHARS, checkBounds } from './bounds';
export { openAuditReader } from './audit-store';
export type { AuditReader } from './audit-store';

// What the edges need of the kernel and the drivers, so that they never reach past the hub.
export type { CapabilityOffer, InteractionKind, JsonValue, SelectionExplanation } from '../kernel';
export type { CallerEnvironment, ChannelEntry, DriverErrorKind, DriverInfo, RecvBatch, SendReceipt, TierSpec } from '../drivers';
export { DRIVER_ERROR_KINDS, DriverError, driverOfChannel, renderDriverError, tmuxSnippet } from '../drivers';
