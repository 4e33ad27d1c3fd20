/**
 * Public surface of the drivers: the contract every driver implements and the drivers Uplink
 * ships. The hub imports drivers only from here, so a driver's files stay its own business.
 * The drivers themselves load on first use: a process that only talks to a running hub (the CLI
 * forwarding a command) imports this index for the contract and never loads a driver.
 */
export * from './contract';
export * from './protocol-schemas';
export { globMatch } from './glob';
export { writeFileAtomic } from './files';
export { serveDriver } from './external/serve';
export type { ServeIo } from './external/serve';
export { tmuxSnippet } from './tmux/snippet';
export type { TmuxConfig, TmuxDriverOptions } from './tmux';
export type { DesktopConfig, DesktopDriver, DesktopDriverOptions } from './desktop';

/** The drivers Uplink ships. */
export async function loadProductDrivers() {
  const [tmux, desktop] = await Promise.all([import('./tmux'), import('./desktop')]);
  return { tmux, desktop };
}
export { ExternalDriver } from './external/host';
export type { ExternalDriverOptions, ExternalStatus, ProcessState, RestartProgress } from './external/host';
export { sha256File } from './external/admission';
export type { Admission, Integrity } from './external/admission';
export type { SchemaCheck } from './external/answers';
export { rpcErrorOf } from './external/session';
export type { TraceEntry, TraceFilter } from './external/trace';
export { EXTENSIONS, INVALID_PARAMS, METHOD_NOT_FOUND, PARSE_ERROR, PROTOCOL_VERSION } from './external/wire';
export type { InitializeParams, InitializeResult } from './external/wire';
