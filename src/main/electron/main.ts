/**
 * Electron main: the only code that imports electron. A short list of modules, enabled in
 * order; security first so no window ever exists without its guards. Started as `Uplink mcp`
 * (how MCP clients reach a packaged app, see launch-mode.ts) it serves MCP on stdio instead:
 * no window, no single-instance lock, nothing on stdout but the protocol. Started with an attach
 * URL it is only a hardened window on a running hub's panel: no hub, no lock, a throwaway profile.
 */
import { app } from 'electron';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { resolveDataDir } from '../hub';
import { runStdioMcp } from '../edges/mcp/stdio';
import type { AppModule, ModuleContext } from './app-module';
import { hubModule } from './hub-module';
import { ATTACH_ENV, attachRequest, checkAttachUrl, launchMode } from './launch-mode';
import { securityModule, singleInstanceModule } from './security';
import { windowModule } from './window';

const MODULES: AppModule[] = [singleInstanceModule, securityModule, hubModule, windowModule];
const ATTACH_MODULES: AppModule[] = [securityModule, windowModule];

async function start(attaching: boolean): Promise<void> {
  const quitters: Array<() => Promise<void> | void> = [];
  const onQuit = (fn: () => Promise<void> | void): void => void quitters.push(fn);
  let ctx: ModuleContext = {
    app,
    rendererIndexUrl: pathToFileURL(join(app.getAppPath(), 'dist', 'renderer', 'index.html')).href,
    preloadPath: join(__dirname, 'preload.cjs'),
    onQuit,
  };
  if (attaching) {
    const target = checkAttachUrl(attachRequest(process.argv, process.env) ?? '');
    // The URL may carry a one-time code: no child process inherits it.
    delete process.env[ATTACH_ENV];
    if ('error' in target) {
      process.stderr.write(`${target.error}\n`);
      app.exit(2);
      return;
    }
    ctx = { app, rendererIndexUrl: target.url, attachOrigin: target.origin, onQuit };
    // A profile of its own: never the installed app's (which may be running), and the panel's
    // stored sign-in for this hub goes with the window.
    const profile = mkdtempSync(join(tmpdir(), 'uplink-attach-'));
    app.setPath('userData', profile);
    onQuit(async () => rmSync(profile, { recursive: true, force: true }));
    // Whoever started the window (the demo) ends it with a signal: quit cleanly, profile and all.
    for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => app.quit());
  }
  app.enableSandbox();
  let quitting = false;
  app.on('before-quit', (event) => {
    if (quitting) return;
    quitting = true;
    event.preventDefault();
    void (async () => {
      for (const fn of quitters.reverse()) await Promise.resolve(fn()).catch(() => undefined);
      app.exit(0);
    })();
  });
  for (const m of attaching ? ATTACH_MODULES : MODULES) {
    try {
      await m.enable(ctx);
    } catch (error) {
      process.stderr.write(
        `uplink error [core:Unavailable]: could not start ${m.name}: ${error instanceof Error ? error.message : String(error)} — hint: run \`uplink doctor\`\n`,
      );
      app.exit(1);
      return;
    }
  }
}

/** `Uplink mcp`: the stdio MCP server (forwards to the running panel's hub when there is one). */
async function startMcp(): Promise<void> {
  // A headless helper process: no dock icon, no GPU process.
  app.dock?.hide();
  app.disableHardwareAcceleration();
  try {
    app.exit(await runStdioMcp(resolveDataDir()));
  } catch (error) {
    process.stderr.write(
      `uplink error [core:Unavailable]: MCP over stdio failed: ${error instanceof Error ? error.message : String(error)} — hint: run \`uplink doctor\`\n`,
    );
    app.exit(1);
  }
}

const mode = launchMode(process.argv, process.defaultApp === true, process.env);
void (mode === 'mcp' ? startMcp() : start(mode === 'attach'));
