/**
 * The preload: exposes exactly the PanelApi as `window.uplink`, built from the channel map, and
 * nothing else — no ipcRenderer, no Node. Calls return plain JSON; failures become rejections
 * with the hub's message.
 */
import { contextBridge, ipcRenderer } from 'electron';
import type { IpcRendererEvent } from 'electron';
import type { PanelErrorWire } from '../shared/panel-api';
import { PanelCallError, ipcCallChannel, ipcEventChannel } from '../shared/panel-api';
import { createPanelProxy } from '../shared/panel-proxy';

type Reply = { ok: true; result: unknown } | { ok: false; error: PanelErrorWire };

const api = createPanelProxy({
  async invoke(method, params) {
    const reply = (await ipcRenderer.invoke(ipcCallChannel(method), params)) as Reply;
    if (!reply.ok) throw new PanelCallError(reply.error);
    return reply.result;
  },
  subscribe(event, listener) {
    const channel = ipcEventChannel(event);
    // Strip the IpcRendererEvent: the page must never see `sender` (it is an ipcRenderer handle).
    const wrapped = (_e: IpcRendererEvent, payload: unknown) => listener(payload);
    ipcRenderer.on(channel, wrapped);
    return () => {
      ipcRenderer.removeListener(channel, wrapped);
    };
  },
});

contextBridge.exposeInMainWorld('uplink', api);
