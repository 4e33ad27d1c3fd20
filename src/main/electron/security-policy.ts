/**
 * The Electron shell's security decisions as pure functions, so they are unit-tested in Node
 * without the Electron binary. `security.ts` applies them to the real app.
 */
import type { WebPreferences } from 'electron';
import { panelCsp } from '../edges/panel/static';

/**
 * WebPreferences for the panel window: isolated, sandboxed, no Node, no webviews. No preload in
 * attach mode: that page talks to its own hub over its WebSocket, and gets no IPC bridge.
 */
export function secureWebPreferences(preloadPath?: string): WebPreferences {
  return {
    ...(preloadPath ? { preload: preloadPath } : {}),
    contextIsolation: true,
    sandbox: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webviewTag: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    experimentalFeatures: false,
    // Middle-click would open links in new windows; the window-open handler denies them anyway.
    disableBlinkFeatures: 'Auxclick',
    navigateOnDragDrop: false,
    spellcheck: false,
    safeDialogs: true,
    devTools: process.env.UPLINK_DEVTOOLS === '1',
  };
}

/**
 * The CSP header for every response the window loads (file:// pages get the meta tag too); in
 * attach mode the browser panel's own, which lets the page reach its hub's WebSocket and no more.
 */
export function electronCsp(attachOrigin?: string): string {
  return attachOrigin ? panelCsp(attachOrigin) : ELECTRON_CSP;
}

export const ELECTRON_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'";

/**
 * True when an IPC message comes from our own renderer: the top frame showing the built
 * `index.html` (same file URL, ignoring the fragment). Anything else — a subframe, a page that
 * navigated elsewhere, a devtools extension — is refused.
 */
export function isTrustedSender(frameUrl: string | undefined, rendererIndexUrl: string, isMainFrame = true): boolean {
  if (!frameUrl || !isMainFrame) return false;
  let got: URL;
  let want: URL;
  try {
    got = new URL(frameUrl);
    want = new URL(rendererIndexUrl);
  } catch {
    return false;
  }
  if (got.protocol !== want.protocol) return false;
  if (want.protocol === 'file:') return got.pathname === want.pathname && got.host === want.host;
  return got.origin === want.origin;
}

/** Navigation is allowed only to the renderer itself (a reload); everything else is blocked. */
export function allowNavigation(targetUrl: string, rendererIndexUrl: string): boolean {
  return isTrustedSender(targetUrl, rendererIndexUrl);
}

/** Every permission request (camera, notifications, clipboard-read…) is denied. */
export function permissionDecision(_permission: string): boolean {
  return false;
}

/** Only URLs loaded from our own files; remote content (http/https and friends) is refused. */
export function isLocalResource(url: string): boolean {
  return url.startsWith('file://') || url.startsWith('devtools://') || url.startsWith('data:');
}

/**
 * Whether the window may request `url`: our own files, or in attach mode only the attached hub
 * (its http(s) origin and the same host's WebSocket) — never a file, never another host.
 */
export function allowRequest(url: string, attachOrigin?: string): boolean {
  if (!attachOrigin) return isLocalResource(url);
  if (url.startsWith('devtools://') || url.startsWith('data:')) return true;
  try {
    const got = new URL(url);
    const want = new URL(attachOrigin);
    return got.host === want.host && (got.protocol === want.protocol || got.protocol === want.protocol.replace(/^http/, 'ws'));
  } catch {
    return false;
  }
}
