/**
 * Public surface of the drivers: the contract every driver implements and the drivers Uplink
 * ships. The hub imports drivers only from here, so a driver's files stay its own business.
 * The drivers themselves load on first use: a process that only talks to a running hub (the CLI
 * forwarding a command) imports this index for the contract and never loads a driver.
 */
export * from './contract';
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
export { ExternalDriver, rpcErrorOf, sha256File } from './external/host';
export { EXTENSIONS, INVALID_PARAMS, METHOD_NOT_FOUND, PARSE_ERROR } from './external/wire';
export type { Admission, ExternalDriverOptions, ExternalStatus, Integrity, ProcessState, TraceEntry, TraceFilter } from './external/host';
