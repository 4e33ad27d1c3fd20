/**
 * The PanelApi: the one contract between the renderer and the hub. The Electron
 * preload and the browser's WebSocket client both implement it, and both the IPC handlers and
 * the WebSocket server are generated from the channel map in `panel-channels.ts`, so a method
 * name can never differ between the two sides (VS Code's ProxyChannel idea).
 */
import { Type } from '@sinclair/typebox';
import type { Static, TSchema } from '@sinclair/typebox';
import type { PANEL_CALLS, PANEL_EVENTS, PanelEventName, PanelMethod } from './panel-channels';
import { StringEnum } from './schema';

export type { PanelEventName, PanelMethod } from './panel-channels';

/** A request with no parameters is called with none. */
type Request<S extends TSchema> = keyof Static<S> extends never ? void : Static<S>;

/** Request and response type of each call, as the channel map declares them. */
export type PanelCalls = {
  [M in PanelMethod]: { req: Request<(typeof PANEL_CALLS)[M]['request']>; res: Static<(typeof PANEL_CALLS)[M]['response']> };
};

/** Payload of each event stream, as the channel map declares it. */
export type PanelEvents = { [E in PanelEventName]: Static<(typeof PANEL_EVENTS)[E]> };

/** Removes a listener; calling it twice is harmless. */
export type Disposer = () => void;

/** The calls of the PanelApi as async functions. */
export type PanelCallFns = {
  [M in PanelMethod]: PanelCalls[M]['req'] extends void ? () => Promise<PanelCalls[M]['res']> : (req: PanelCalls[M]['req']) => Promise<PanelCalls[M]['res']>;
};

/** What the renderer talks to: calls plus event streams; every subscription returns a disposer. */
export interface PanelApi extends PanelCallFns {
  on<E extends PanelEventName>(event: E, listener: (payload: PanelEvents[E]) => void): Disposer;
}

/** The error a call rejects with; `message` is meant for the operator. */
export const PanelErrorWire = Type.Object({
  code: StringEnum(['invalid_request', 'not_found', 'unauthorized', 'failed', 'unavailable']),
  message: Type.String(),
});
export type PanelErrorWire = Static<typeof PanelErrorWire>;

/** Thrown on the client side when a call fails. */
export class PanelCallError extends Error {
  readonly code: PanelErrorWire['code'];
  constructor(wire: PanelErrorWire) {
    super(wire.message);
    this.name = 'PanelCallError';
    this.code = wire.code;
  }
}

/** Electron IPC channel name for a call. */
export const ipcCallChannel = (method: PanelMethod): string => `uplink:call:${method}`;
/** Electron IPC channel name for an event stream. */
export const ipcEventChannel = (event: PanelEventName): string => `uplink:event:${event}`;

/** The server side of the PanelApi: calls get the caller's identity for authorization/audit. */
export type PanelHandlers = {
  [M in PanelMethod]: (req: PanelCalls[M]['req'] extends void ? Record<string, never> : PanelCalls[M]['req']) => Promise<PanelCalls[M]['res']>;
};
