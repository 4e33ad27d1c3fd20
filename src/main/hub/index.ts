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
