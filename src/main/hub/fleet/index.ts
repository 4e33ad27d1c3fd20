/** Fleet membership on NATS; loaded only by a hub whose config has a `fleet` section. */
export { joinFleet } from './member';
export type { FleetHub } from './member';
export type { FleetOptions } from './fleet';
export type { FleetCheckpoint } from './witness';
export { initFleet } from './init';
export type { FleetInitConfig, FleetInitOptions, FleetInitResult } from './init';
