/**
 * What this Electron process was started for, decided from argv alone (pure, unit-tested in
 * Node). A packaged app cannot run `bin/uplink` from inside its asar, and its fuses forbid
 * `ELECTRON_RUN_AS_NODE`, so MCP clients start the app itself as `Uplink mcp`: that process
 * serves MCP on stdio headless — no window, no single-instance lock (which would otherwise hand
 * the launch to the running panel and raise its window).
 */
import { ATTACH_ENV } from '../../shared/attach';

export { ATTACH_ENV };

/**
 * `panel`: the desktop app (hub, HTTP, window). `mcp`: MCP over stdio, headless. `attach`: a
 * window on the panel of a hub that already runs elsewhere (`uplink demo`, `uplink serve`), with
 * no hub of its own.
 */
export type LaunchMode = 'panel' | 'mcp' | 'attach';

/**
 * The user's arguments: after the executable, and after the app path when Electron runs an
 * unpackaged app (`electron . mcp`, where `process.defaultApp` is true). Chromium/Electron
 * switches (`--no-sandbox`, `--enable-logging`…) are not commands.
 */
export function userArgs(argv: readonly string[], defaultApp: boolean): string[] {
  return argv.slice(defaultApp ? 2 : 1).filter((a) => !a.startsWith('-'));
}

/** The URL attach mode was asked for (unchecked): `--attach <url>` / `--attach=<url>`, else the environment. */
export function attachRequest(argv: readonly string[], env: NodeJS.ProcessEnv = {}): string | undefined {
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i] ?? '';
    if (a === '--attach') return argv[i + 1] ?? '';
    if (a.startsWith('--attach=')) return a.slice('--attach='.length);
  }
  return env[ATTACH_ENV] || undefined;
}

/**
 * `mcp` as the first user argument ⇒ the stdio MCP server; an attach URL ⇒ a window on that
 * hub's panel; anything else opens the panel with its own hub.
 */
export function launchMode(argv: readonly string[], defaultApp: boolean, env: NodeJS.ProcessEnv = {}): LaunchMode {
  // The value of `--attach <url>` is not a command; neither is `mcp` after it.
  const args = userArgs(argv, defaultApp).filter((a) => a !== attachRequest(argv));
  if (args[0] === 'mcp') return 'mcp';
  return attachRequest(argv, env) === undefined ? 'panel' : 'attach';
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * The panel URL attach mode may load: http(s) on a loopback host, nothing else — the window shows
 * a page with operator authority, which must come from this machine's hub. The refusal names only
 * the scheme and host, never the URL: its fragment carries a one-time sign-in code.
 */
export function checkAttachUrl(raw: string): { url: string; origin: string } | { error: string } {
  const refuse = (what: string): { error: string } => ({
    error: `uplink error [core:Invalid]: attach mode loads only a loopback panel URL (http://127.0.0.1:PORT/…, [::1] or localhost), not ${what} — hint: pass the panel URL \`uplink serve\` or \`uplink panel-url\` prints`,
  });
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return refuse('something that is not a URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return refuse(`a ${u.protocol.replace(/:$/, '')} URL`);
  if (u.username || u.password) return refuse('a URL with credentials');
  if (!LOOPBACK_HOSTS.has(u.hostname)) return refuse(`host ${u.hostname || '(none)'}`);
  return { url: u.href, origin: u.origin };
}

/** Facts about the running app the stdio command depends on. */
export interface StdioCommandHost {
  /** `app.isPackaged`. */
  packaged: boolean;
  /** `process.execPath`: the app's executable (Electron's binary when unpackaged). */
  execPath: string;
  /** `$APPIMAGE`: the AppImage file itself; `execPath` is inside a temporary mount. */
  appImage?: string;
  /** `bin/uplink` of the checkout, for an unpackaged app. */
  cliPath?: string;
}

/**
 * The argv an MCP client runs for stdio: the packaged app with `mcp` (the AppImage file, not
 * its temporary mount), or the checkout's `bin/uplink mcp` when running from source.
 */
export function stdioCommand(host: StdioCommandHost): string[] {
  if (host.packaged) return [host.appImage || host.execPath, 'mcp'];
  return [host.cliPath ?? 'uplink', 'mcp'];
}
