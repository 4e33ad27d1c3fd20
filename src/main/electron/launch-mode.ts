/**
 * What this Electron process was started for, decided from argv alone (pure, unit-tested in
 * Node). A packaged app cannot run `bin/uplink` from inside its asar, and its fuses forbid
 * `ELECTRON_RUN_AS_NODE`, so MCP clients start the app itself as `Uplink mcp`: that process
 * serves MCP on stdio headless — no window, no single-instance lock (which would otherwise hand
 * the launch to the running panel and raise its window).
 */

/** `panel`: the desktop app (hub, HTTP, window). `mcp`: MCP over stdio, headless. */
export type LaunchMode = 'panel' | 'mcp';

/**
 * The user's arguments: after the executable, and after the app path when Electron runs an
 * unpackaged app (`electron . mcp`, where `process.defaultApp` is true). Chromium/Electron
 * switches (`--no-sandbox`, `--enable-logging`…) are not commands.
 */
export function userArgs(argv: readonly string[], defaultApp: boolean): string[] {
  return argv.slice(defaultApp ? 2 : 1).filter((a) => !a.startsWith('-'));
}

/** `mcp` as the first user argument ⇒ the stdio MCP server; anything else opens the panel. */
export function launchMode(argv: readonly string[], defaultApp: boolean): LaunchMode {
  return userArgs(argv, defaultApp)[0] === 'mcp' ? 'mcp' : 'panel';
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
