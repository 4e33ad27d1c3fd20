/**
 * Public surface of the drivers: the contract every driver implements and the drivers Uplink
 * ships. The hub imports drivers only from here, so a driver's files stay its own business.
 */
export * from './contract';
export { createTmuxDriver, tmuxConfigSchema, tmuxSnippet } from './tmux';
export type { TmuxConfig, TmuxDriverOptions } from './tmux';
export { createDesktopDriver, desktopConfigSchema } from './desktop';
export type { DesktopConfig, DesktopDriver, DesktopDriverOptions } from './desktop';
