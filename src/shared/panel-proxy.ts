/**
 * Turns a transport (one `invoke` and one `subscribe` function) into a PanelApi by iterating the
 * channel map — the preload and the WebSocket client are both built this way, so neither can
 * expose a method the other lacks.
 */
import type { Disposer, PanelApi, PanelEventName, PanelEvents, PanelMethod } from './panel-api';
import { Emitter } from './emitter';
import { PANEL_EVENT_NAMES, PANEL_METHODS } from './panel-channels';

/** What a transport provides. */
export interface PanelTransport {
  invoke(method: PanelMethod, params: unknown): Promise<unknown>;
  subscribe(event: PanelEventName, listener: (payload: unknown) => void): Disposer;
}

/** Builds the PanelApi over a transport; unknown event names throw at once. */
export function createPanelProxy(transport: PanelTransport): PanelApi {
  const api: Record<string, unknown> = {};
  for (const method of PANEL_METHODS) {
    api[method] = (params?: unknown) => transport.invoke(method, params ?? {});
  }
  api.on = <E extends PanelEventName>(event: E, listener: (payload: PanelEvents[E]) => void): Disposer => {
    if (!PANEL_EVENT_NAMES.includes(event)) throw new Error(`unknown panel event ${String(event)} — hint: see PANEL_EVENTS`);
    return transport.subscribe(event, listener as (payload: unknown) => void);
  };
  return Object.freeze(api) as unknown as PanelApi;
}

/** One emitter per event name, used by both transports. */
export class EventHub {
  #emitters = new Map<string, Emitter<unknown>>();

  on(event: string, listener: (payload: unknown) => void): Disposer {
    let emitter = this.#emitters.get(event);
    if (!emitter) this.#emitters.set(event, (emitter = new Emitter({ onError: (error) => console.error('uplink panel: an event listener threw', error) })));
    return emitter.on(listener);
  }

  emit(event: string, payload: unknown): void {
    this.#emitters.get(event)?.emit(payload);
  }

  size(): number {
    let n = 0;
    for (const emitter of this.#emitters.values()) n += emitter.size;
    return n;
  }
}
