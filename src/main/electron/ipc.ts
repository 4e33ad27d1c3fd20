/**
 * IPC generated from the PanelApi channel map: one `ipcMain.handle` per method, one
 * `webContents.send` channel per event. Every message's sender is checked (our own top frame)
 * and every payload validated in `dispatchCall` before a handler runs.
 */
import type { IpcMain, IpcMainInvokeEvent, WebContents } from 'electron';
import type { Disposer, PanelEventName, PanelEvents, PanelHandlers } from '../../shared/panel-api';
import { ipcCallChannel, ipcEventChannel } from '../../shared/panel-api';
import { PANEL_METHODS } from '../../shared/panel-channels';
import type { CallOutcome } from '../edges/panel/dispatch';
import { dispatchCall } from '../edges/panel/dispatch';
import { isTrustedSender } from './security-policy';

/** The reply of every IPC call: plain JSON, never a thrown Error (which would lose its shape). */
export type IpcReply = CallOutcome;

/** Builds the handler for one IPC call channel (exported for tests). */
export function ipcCallHandler(method: string, handlers: () => PanelHandlers | undefined, rendererIndexUrl: string) {
  return async (event: Pick<IpcMainInvokeEvent, 'senderFrame'>, params: unknown): Promise<IpcReply> => {
    const frame = event.senderFrame;
    const isMain = frame ? frame.parent === null : false;
    if (!isTrustedSender(frame?.url, rendererIndexUrl, isMain)) {
      return { ok: false, error: { code: 'unauthorized', message: 'IPC from an untrusted frame was refused' } };
    }
    const h = handlers();
    if (!h) return { ok: false, error: { code: 'unavailable', message: 'the hub is starting — hint: retry in a moment' } };
    return dispatchCall(h, method, params);
  };
}

/** Registers every call channel; returns the disposer that removes them. */
export function registerPanelIpc(
  ipcMain: Pick<IpcMain, 'handle' | 'removeHandler'>,
  handlers: () => PanelHandlers | undefined,
  rendererIndexUrl: string,
): Disposer {
  for (const method of PANEL_METHODS) ipcMain.handle(ipcCallChannel(method), ipcCallHandler(method, handlers, rendererIndexUrl));
  return () => {
    for (const method of PANEL_METHODS) ipcMain.removeHandler(ipcCallChannel(method));
  };
}

/** Sends an event to a window's renderer, if it is still there. */
export function sendPanelEvent<E extends PanelEventName>(contents: Pick<WebContents, 'isDestroyed' | 'send'>, event: E, payload: PanelEvents[E]): void {
  if (!contents.isDestroyed()) contents.send(ipcEventChannel(event), payload);
}
