/**
 * Module-level actions: the only code that calls the PanelApi and writes the store. PanelApi
 * listeners call these; components call these from callbacks. Tests drive them directly.
 */
export * from './connection';
export * from './approvals';
export * from './timeline';
export * from './views';
export * from './drivers';
export * from './fleet';
export * from './hub';
export * from './away';
export { toast } from './common';
