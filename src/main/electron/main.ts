/**
 * Electron main: the only code that imports electron. A short list of modules, enabled in
 * order; security first so no window ever exists without its guards. Started as `Uplink mcp`
 * (how MCP clients reach a packaged app, see launch-mode.ts) it serves MCP on stdio instead:
 * no window, no single-instance lock, nothing on stdout but the protocol.
 */
import { app } from 'electron';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { resolveDataDir } from '../hub';
import { runStdioMcp } from '../edges/mcp/stdio';
import type { AppModule, ModuleContext } from './app-module';
import { hubModule } from './hub-module';
import { launchMode } from './launch-mode';
import { securityModule, singleInstanceModule } from './security';
import { windowModule } from './window';

const MODULES: AppModule[] = [singleInstanceModule, securityModule, hubModule, windowModule];

async function start(): Promise<void> {
  const quitters: Array<() => Promise<void> | void> = [];
  const ctx: ModuleContext = {
    app,
    rendererIndexUrl: pathToFileURL(join(app.getAppPath(), 'dist', 'renderer', 'index.html')).href,
    preloadPath: join(__dirname, 'preload.cjs'),
    onQuit: (fn) => quitters.push(fn),
  };
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
  for (const m of MODULES) {
    try {
      await m.enable(ctx);
    } catch (error) {
      process.stderr.write(`uplink error [core:Unavailable]: could not start ${m.name}: ${error instanceof Error ? error.message : String(error)} — hint: run \`uplink doctor\`\n`);
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
    process.stderr.write(`uplink error [core:Unavailable]: MCP over stdio failed: ${error instanceof Error ? error.message : String(error)} — hint: run \`uplink doctor\`\n`);
    app.exit(1);
  }
}

void (launchMode(process.argv, process.defaultApp === true) === 'mcp' ? startMcp() : start());
