/**
 * `uplink/driver-sdk`: what a third-party driver written in TypeScript or JavaScript needs, the
 * very contract types and error class the hub uses, and `serveDriver` to speak the protocol.
 */
export { serveDriver, extensionsOf } from './serve';
export type { ServeIo } from './serve';
export { DRIVER_ERROR_KINDS, DriverError, isMutating } from '../contract';
export type * from '../contract';
export type { JsonSchema, JsonValue } from '../../kernel';
export { PROTOCOL_VERSION, MAX_LINE_BYTES } from './wire';
