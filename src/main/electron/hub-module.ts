/**
 * Hub module: the Electron main hosts the hub and its loopback HTTP server (MCP at /mcp and the
 * browser panel), and opens one panel session for the window over IPC.
 */
import { ipcMain } from 'electron';
import { join } from 'node:path';
import { createHub, ensureDataDir, loadDrivers, recordUnfinishedCalls, resolveDataDir } from '../hub';
import { startHubServer } from '../edges/http/server';
import { createBroadcast, createPanelMount } from '../edges/panel/mount';
import { openPanelSession } from '../edges/panel/session';
import type { PanelEventName, PanelEvents } from '../../shared/panel-api';
import type { AppModule } from './app-module';
import { registerPanelIpc, sendPanelEvent } from './ipc';
import { stdioCommand } from './launch-mode';
import { notifyApproval } from './window';

export const hubModule: AppModule = {
  name: 'hub',
  async enable(ctx) {
    const dataDir = ensureDataDir(resolveDataDir());
    const rendererDir = join(ctx.app.getAppPath(), 'dist', 'renderer');
    const cliPath = join(ctx.app.getAppPath(), 'bin', 'uplink');
    // Packaged, bin/uplink sits inside the asar and cannot run: agents start the app as `Uplink mcp`.
    const stdio = stdioCommand({
      packaged: ctx.app.isPackaged,
      execPath: process.execPath,
      cliPath,
      ...(process.env.APPIMAGE ? { appImage: process.env.APPIMAGE } : {}),
    });
    const hub = await createHub({ dataDir, drivers: await loadDrivers(dataDir) });
    recordUnfinishedCalls(hub);
    const server = await startHubServer({
      hub,
      dataDir,
      mounts: (http) => [
        createPanelMount({
          hub: http.hub,
          token: http.token,
          authenticate: http.panelSession,
          sessions: http.panelSessions,
          origin: http.origin,
          rendererDir,
          cliPath,
          stdioCommand: stdio,
          version: ctx.app.getVersion(),
        }),
      ],
    });
    ctx.onQuit(() => server.close());
    ctx.onQuit(() => hub.close());

    const emit = <E extends PanelEventName>(event: E, payload: PanelEvents[E]): void => {
      const contents = ctx.window?.webContents;
      if (contents) sendPanelEvent(contents, event, payload);
      if (event === 'approvalAdded') notifyApproval(ctx, payload as PanelEvents['approvalAdded']);
    };
    const session = openPanelSession(
      hub,
      {
        token: server.token,
        mcpUrl: () => server.mcpUrl,
        cliPath,
        stdioCommand: stdio,
        version: ctx.app.getVersion(),
        user: process.env.USER ?? process.env.USERNAME ?? 'operator',
      },
      createBroadcast(),
      emit,
      Date.now(),
      'electron',
    );
    ctx.handlers = session.handlers;
    ctx.onQuit(() => session.close());
    const unregister = registerPanelIpc(ipcMain, () => ctx.handlers, ctx.rendererIndexUrl);
    ctx.onQuit(unregister);
    process.stdout.write(`uplink: hub running — MCP ${server.mcpUrl}; browser panel: run \`uplink panel-url\` for a one-time link\n`);
  },
};
