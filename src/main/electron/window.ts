/**
 * Window module: one panel window, created hardened and shown only when ready, so the operator
 * never sees a blank frame. Notifications for new approvals come from here (main process), and
 * never focus the window: the panel must not steal focus from a window an agent is driving.
 */
import { BrowserWindow, Notification } from 'electron';
import type { PendingApproval } from '../../shared/panel-types';
import type { AppModule, ModuleContext } from './app-module';
import { notifyApproval as notify } from './attention';
import { secureWebPreferences } from './security-policy';

function createWindow(ctx: ModuleContext): BrowserWindow {
  const win = new BrowserWindow({
    width: 1280,
    height: 820,
    minWidth: 900,
    minHeight: 560,
    show: false,
    title: 'Uplink',
    backgroundColor: '#14171c',
    // The guards are repeated literally so static analysis (electronegativity) sees them; the
    // full set comes from the unit-tested secureWebPreferences().
    webPreferences: {
      ...secureWebPreferences(ctx.preloadPath),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webviewTag: false,
      disableBlinkFeatures: 'Auxclick',
    },
  });
  // eslint-disable-next-line no-restricted-syntax -- the window the operator opened, appearing for the first time
  win.once('ready-to-show', () => win.show());
  // Electron's own rejection quotes the URL, whose fragment may hold a one-time sign-in code.
  win.loadURL(ctx.rendererIndexUrl).catch((error: unknown) => {
    const code = (error as { code?: unknown }).code;
    process.stderr.write(
      `uplink error [core:Unavailable]: the panel did not load (${typeof code === 'string' ? code : 'load failed'}) — hint: ${ctx.attachOrigin ? `is the hub at ${ctx.attachOrigin} still running?` : 'run `npm run build`'}\n`,
    );
  });
  win.on('closed', () => {
    if (ctx.window === win) ctx.window = undefined;
  });
  return win;
}

export const windowModule: AppModule = {
  name: 'window',
  async enable(ctx) {
    await ctx.app.whenReady();
    ctx.window = createWindow(ctx);
    ctx.app.on('activate', () => {
      if (!ctx.window) ctx.window = createWindow(ctx);
    });
    ctx.app.on('window-all-closed', () => {
      if (process.platform !== 'darwin') ctx.app.quit();
    });
  },
};

/** An OS notification for a new approval while the window is not focused; never takes focus. */
export function notifyApproval(ctx: ModuleContext, a: PendingApproval): void {
  notify({ window: ctx.window, supported: Notification.isSupported(), create: (options) => new Notification(options) }, a);
}
