/**
 * Security module: applies `security-policy.ts` to every web contents — navigation and new
 * windows blocked, permission requests denied, remote requests refused, CSP header set. In
 * attach mode "local" is the attached loopback hub, and navigation stays on its origin.
 */
import { session } from 'electron';
import type { AppModule } from './app-module';
import { launchMode } from './launch-mode';
import { allowNavigation, allowRequest, electronCsp, permissionDecision } from './security-policy';

export const securityModule: AppModule = {
  name: 'security',
  async enable(ctx) {
    // Guards on every web contents, registered before any can exist.
    ctx.app.on('web-contents-created', (_event, contents) => {
      contents.on('will-navigate', (event, url) => {
        if (!allowNavigation(url, ctx.rendererIndexUrl)) event.preventDefault();
      });
      contents.on('will-redirect', (event, url) => {
        if (!allowNavigation(url, ctx.rendererIndexUrl)) event.preventDefault();
      });
      contents.on('will-attach-webview', (event) => event.preventDefault());
      contents.setWindowOpenHandler(() => ({ action: 'deny' }));
    });
    // The default session exists only once the app is ready (and before any window is made).
    await ctx.app.whenReady();
    const s = session.defaultSession;
    s.setPermissionRequestHandler((_wc, permission, callback) => callback(permissionDecision(permission)));
    s.setPermissionCheckHandler((_wc, permission) => permissionDecision(permission));
    // No remote content: anything that is not our own file (or devtools), or in attach mode the
    // attached hub, is cancelled.
    s.webRequest.onBeforeRequest((details, callback) => callback({ cancel: !allowRequest(details.url, ctx.attachOrigin) }));
    const csp = electronCsp(ctx.attachOrigin);
    s.webRequest.onHeadersReceived((details, callback) => callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [csp] } }));
  },
};

/** Single-instance module: a second launch focuses the first window instead of a second hub. */
export const singleInstanceModule: AppModule = {
  name: 'single-instance',
  enable(ctx) {
    if (!ctx.app.requestSingleInstanceLock()) {
      ctx.app.quit();
      process.exit(0);
    }
    // The operator launched the app again by hand: bring the panel forward (that focuses it,
    // as they asked). A stray `Uplink mcp` that took the lock path must never raise the window.
    ctx.app.on('second-instance', (_event, argv) => {
      const w = ctx.window;
      if (!w || launchMode(argv, process.defaultApp === true) === 'mcp') return;
      if (w.isMinimized()) w.restore();
      // eslint-disable-next-line no-restricted-syntax -- the operator launched the app a second time by hand
      w.show();
    });
  },
};
