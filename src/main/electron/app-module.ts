/** The main process is a short list of modules, each enabled once with the shared context. */
import type { App, BrowserWindow } from 'electron';
import type { PanelHandlers } from '../../shared/panel-api';

/** What modules share. Filled in as modules enable (the hub module sets `handlers`). */
export interface ModuleContext {
  app: App;
  /** What the window loads: file:// URL of the built renderer's index.html, or the attached panel URL. */
  rendererIndexUrl: string;
  /** None in attach mode (the page has no IPC bridge). */
  preloadPath?: string;
  /** Attach mode: the origin of the running hub whose panel the window shows. */
  attachOrigin?: string;
  /** The PanelApi handlers of the window's session, once the hub runs. */
  handlers?: PanelHandlers;
  window?: BrowserWindow;
  /** Called on quit, in reverse order of registration. */
  onQuit(fn: () => Promise<void> | void): void;
}

/** One concern of the main process (vite-electron-builder's AppModule). */
export interface AppModule {
  readonly name: string;
  enable(ctx: ModuleContext): Promise<void> | void;
}
