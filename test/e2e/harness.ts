/**
 * The e2e harness: a private tmux server (`tmux -S <tmp>/sock`), a real `uplink serve` (the built
 * dist/cli.mjs, run by a test launcher that hands it a driver fixture) on a fresh data directory,
 * a real MCP SDK client over Streamable HTTP, and Debian Chromium.
 */
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { writeLauncherFile } from '../fixtures/launcher';
import { externalPackages } from '../../scripts/esbuild-externals.mjs';

export const ROOT = process.env.UPLINK_ROOT ?? fileURLToPath(new URL('../..', import.meta.url));
export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Env for child processes: never the user's tmux. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  delete env.TMUX;
  delete env.TMUX_PANE;
  return env;
}

/** A private tmux server with one session. */
export class PrivateTmux {
  readonly dir = mkdtempSync(join(tmpdir(), 'uplink-e2e-tmux-'));
  readonly socket = join(this.dir, 'sock');

  start(session = 'work', command = 'sh'): void {
    this.tmux('-f', '/dev/null', 'new-session', '-d', '-s', session, '-x', '160', '-y', '40', command);
  }

  tmux(...args: string[]): string {
    return execFileSync('tmux', ['-S', this.socket, ...args], { env: cleanEnv(), encoding: 'utf8' });
  }

  panes(): string[] {
    return this.tmux('list-panes', '-a', '-F', '#{pane_id}').trim().split('\n');
  }

  capture(pane: string): string {
    return this.tmux('capture-pane', '-p', '-t', pane, '-S', '-200');
  }

  stop(): void {
    try {
      this.tmux('kill-server');
    } catch {
      /* already gone */
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

const launchers = new Map<string, string>();
/**
 * Bundles a driver fixture once and writes a launcher like bin/uplink that runs dist/cli.mjs with
 * it (test/fixtures/launcher.ts); returns the launcher. By default the fixture is the real tmux
 * driver alone; `entry` is another fixture under test/e2e/fixtures/.
 */
export async function testLauncher(entry = 'tmux-drivers.ts'): Promise<string> {
  const done = launchers.get(entry);
  if (done) return done;
  const out = join(mkdtempSync(join(tmpdir(), 'uplink-e2e-drivers-')), entry.replace(/\.ts$/, '.mjs'));
  await build({
    entryPoints: [join(ROOT, 'test/e2e/fixtures', entry)],
    outfile: out,
    bundle: true,
    platform: 'node',
    format: 'esm',
    plugins: [externalPackages],
    logLevel: 'warning',
  });
  const launcher = writeLauncherFile(join(dirname(out), 'uplink.mjs'), join(ROOT, 'dist/cli.mjs'), out);
  launchers.set(entry, launcher);
  return launcher;
}

/** A running `uplink serve`. */
export interface Serve {
  proc: ChildProcess;
  url: string;
  /** The one-time panel URL `serve` printed (opens the panel once). */
  panelUrl: string;
  mcpUrl: string;
  /** The agents' MCP token (it does not open the panel). */
  token: string;
  dataDir: string;
  /** A fresh one-time panel URL from `uplink panel-url`. */
  freshPanelUrl(): string;
  /** Runs `uplink <args>` for this hub's data directory (through the running hub); its stdout. */
  cli(...args: string[]): string;
  stop(): Promise<void>;
}

/** Starts `uplink serve --port <port, default 0> --json` with the driver fixture and waits for its URLs. */
export async function startServe(opts: {
  dataDir?: string;
  tmux: PrivateTmux;
  config?: Record<string, unknown>;
  drivers?: string;
  port?: number;
}): Promise<Serve> {
  if (!existsSync(join(ROOT, 'dist/cli.mjs')) || !existsSync(join(ROOT, 'dist/renderer/index.html'))) {
    throw new Error('uplink is not built — hint: run `npm run build` first');
  }
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'uplink-e2e-data-'));
  const config = { tmux: { socket: opts.tmux.socket }, ...(opts.config ?? {}) };
  writeFileSync(join(dataDir, 'config.json'), JSON.stringify(config, null, 2));
  const env = cleanEnv({ UPLINK_DATA_DIR: dataDir, UPLINK_E2E_TMUX_SOCKET: opts.tmux.socket });
  const uplink = await testLauncher(opts.drivers);
  const proc = spawn(process.execPath, [uplink, 'serve', '--port', String(opts.port ?? 0), '--json'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += String(d)));
  const info = await new Promise<{ url: string; panel_url: string; mcp_url: string }>((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`uplink serve did not start: ${stderr}`)), 30_000);
    proc.stdout!.on('data', (d) => {
      buf += String(d);
      const line = buf.split('\n').find((l) => l.startsWith('{'));
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line) as { url: string; panel_url: string; mcp_url: string });
      }
    });
    proc.on('exit', (code) => reject(new Error(`uplink serve exited ${code}: ${stderr}`)));
  });
  const token = readFileSync(join(dataDir, 'token'), 'utf8').trim();
  return {
    proc,
    url: info.url,
    panelUrl: info.panel_url,
    mcpUrl: info.mcp_url,
    token,
    dataDir,
    freshPanelUrl: () => execFileSync(process.execPath, [uplink, 'panel-url'], { env, encoding: 'utf8' }).trim(),
    cli: (...args) => execFileSync(process.execPath, [uplink, ...args], { env, encoding: 'utf8' }),
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
        setTimeout(() => proc.kill('SIGKILL'), 5000).unref();
      }),
  };
}

/** A real MCP client over Streamable HTTP with the hub's token. */
export async function mcpClient(serve: Serve, name = 'e2e-agent'): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(serve.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${serve.token}` } } });
  await client.connect(transport);
  return client;
}

/** Text of an MCP tool result. */
export function toolText(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content.map((c) => c.text ?? '').join('\n');
}

/** Polls until `check` returns a truthy value. */
export async function until<T>(check: () => T | Promise<T>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
