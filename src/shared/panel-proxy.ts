/**
 * Turns a transport (one `invoke` and one `subscribe` function) into a PanelApi by iterating the
 * channel map — the preload and the WebSocket client are both built this way, so neither can
 * expose a method the other lacks.
 */
import type { Disposer, PanelApi, PanelEventName, PanelEvents, PanelMethod } from './panel-api';
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

/** A tiny listener registry per event name, used by both transports. */
export class EventHub {
  #listeners = new Map<string, Set<(payload: unknown) => void>>();

  on(event: string, listener: (payload: unknown) => void): Disposer {
    let set = this.#listeners.get(event);
    if (!set) this.#listeners.set(event, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
    };
  }

  emit(event: string, payload: unknown): void {
    const set = this.#listeners.get(event);
    if (!set) return;
    for (const listener of [...set]) {
      try {
        listener(payload);
      } catch (error) {
        // One bad listener must not starve the others of events.
        console.error('uplink panel: an event listener threw', error);
      }
    }
  }

  size(): number {
    let n = 0;
    for (const set of this.#listeners.values()) n += set.size;
    return n;
  }
}
