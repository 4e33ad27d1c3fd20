/**
 * A file the hub reads put in place as a FIFO, a device or a directory never freezes it: a FIFO
 * config.json used to block the hub's one thread in open() until a writer appeared, and with it
 * `/health`, MCP, the panel and the CLI. Each is refused at once with one line; the hub keeps
 * answering. A real `uplink serve`, so a regression fails on time instead of hanging the tests:
 * every FIFO gets a writer after 10 s.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { buildForTests, runCli, startServe, tmpDataDir, waitFor } from '../../fixtures/hub-build';
import type { Served, TestBuild } from '../../fixtures/hub-build';

let b: TestBuild;
const running: Served[] = [];
const rescuers: Array<ReturnType<typeof spawn>> = [];
const clients: Client[] = [];

beforeAll(async () => {
  b = await buildForTests();
}, 120_000);

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(running.splice(0).map((s) => s.stop()));
  for (const r of rescuers.splice(0)) r.kill();
});

/** Replaces `path` with a FIFO that gets a writer only after 10 s. */
function fifo(path: string): void {
  rmSync(path, { recursive: true, force: true });
  expect(spawnSync('mkfifo', [path]).status).toBe(0);
  rescuers.push(spawn('sh', ['-c', `sleep 10; echo '{}' > '${path}'`], { stdio: 'ignore' }));
}

/** `/health` of the hub, which must answer within a second. */
async function health(url: string): Promise<number> {
  return (await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) })).status;
}

/** The hub's doctor as an agent reads it over MCP. */
async function mcpDoctor(served: Served, dir: string): Promise<{ config: { error?: string }; agents: { error?: string } }> {
  const token = readFileSync(join(dir, 'token'), 'utf8').trim();
  const client = new Client({ name: 'fifo-test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(served.mcp_url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  clients.push(client);
  const result = await client.callTool({ name: 'channel_doctor', arguments: {} }, undefined, { timeout: 5000 });
  await client.close();
  return result.structuredContent as { config: { error?: string }; agents: { error?: string } };
}

/** `uplink <args>`, which must finish within `ms`. */
async function cli(dir: string, args: string[], ms = 15_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return Promise.race([
    runCli(b, dir, args),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`uplink ${args.join(' ')} did not finish within ${ms} ms`)), ms)),
  ]);
}

async function serve(dir: string): Promise<Served> {
  const s = await startServe(b, dir);
  running.push(s);
  return s;
}

describe('files of the wrong type', () => {
  it('config.json as a FIFO, a symlink to /dev/zero or a directory is refused in one line; /health, MCP, the panel and the CLI keep answering', async () => {
    const dir = tmpDataDir();
    const path = join(dir, 'config.json');
    writeFileSync(path, '{}\n');
    const served = await serve(dir);
    const cases: Array<[string, () => void, string]> = [
      ['a FIFO', () => fifo(path), 'it is a FIFO, not a regular file'],
      ['a symlink to /dev/zero', () => (rmSync(path, { force: true }), symlinkSync('/dev/zero', path)), 'it is a character device, not a regular file'],
      ['a directory', () => (rmSync(path, { force: true }), mkdirSync(path)), 'it is a directory, not a regular file'],
    ];
    for (const [what, replace, says] of cases) {
      replace();
      const line = `cannot read ${path}: ${says} (the last good config stays in use)`;
      // Refused as soon as the hub sees the change; meanwhile and after, it answers at once.
      await waitFor(async () => (await health(served.url)) === 200 && (await mcpDoctor(served, dir)).config.error === line, 5000, `doctor to refuse ${what}`);
      expect(await health(served.url), what).toBe(200);
      // The panel's sign-in route, with the operator key `uplink panel-url` uses.
      const key = readFileSync(join(dir, 'operator.key'), 'utf8').trim();
      const minted = await fetch(`${served.url}/panel/code`, {
        method: 'POST',
        headers: { authorization: `Operator ${key}` },
        signal: AbortSignal.timeout(1000),
      });
      expect(minted.status, what).toBe(200);
      // The CLI, forwarded to this hub.
      const doctor = await cli(dir, ['doctor', '--json']);
      expect((JSON.parse(doctor.stdout) as { config: { error?: string } }).config.error, what).toBe(line);
    }
  }, 90_000);

  it('a FIFO config.json at start: the hub starts on the last good config and says why', async () => {
    const dir = tmpDataDir();
    writeFileSync(join(dir, 'config.json'), '{}\n');
    // One run that loaded it, so a last good copy exists.
    expect((await cli(dir, ['doctor'])).code).toBe(0);
    fifo(join(dir, 'config.json'));
    const served = await serve(dir);
    expect(await health(served.url)).toBe(200);
    expect((await mcpDoctor(served, dir)).config.error).toBe(
      `cannot read ${join(dir, 'config.json')}: it is a FIFO, not a regular file (the last good config (saved in ${join(dir, 'config.last-good.json')}) stays in use)`,
    );
  }, 60_000);

  it('agents.json as a FIFO accepts no agent token and blocks nothing', async () => {
    const dir = tmpDataDir();
    const served = await serve(dir);
    const agent = JSON.parse((await cli(dir, ['agents', 'create', 'bot', '--json'])).stdout) as { token: string };
    fifo(join(dir, 'agents.json'));
    const init = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bot', version: '0' } },
    });
    const refused = await fetch(served.mcp_url, {
      method: 'POST',
      headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: init,
      signal: AbortSignal.timeout(1000),
    });
    expect(refused.status).toBe(401);
    expect((await mcpDoctor(served, dir)).agents.error).toBe(
      `${join(dir, 'agents.json')}: cannot be read (it is a FIFO, not a regular file) — no named agent token is accepted until it is fixed`,
    );
    expect(await health(served.url)).toBe(200);
  }, 60_000);

  it('a FIFO MCP token file stops `uplink serve` at once with one line; a FIFO hub.json blocks neither the CLI nor a start', async () => {
    const dir = tmpDataDir();
    fifo(join(dir, 'token'));
    const failed = await cli(dir, ['serve', '--port', '0', '--json']);
    expect(failed.code).not.toBe(0);
    expect(failed.stderr.trim().split('\n')).toContain(
      `uplink error [core:Unavailable]: cannot read the MCP token file ${join(dir, 'token')}: it is a FIFO, not a regular file — hint: remove it and start again (a new token is made)`,
    );

    rmSync(join(dir, 'token'));
    fifo(join(dir, 'hub.json'));
    expect((await cli(dir, ['channels'])).code).toBe(0);
    const served = await serve(dir);
    expect(await health(served.url)).toBe(200);
    // The hub announced itself over the FIFO: the CLI forwards to it.
    expect(JSON.parse(readFileSync(join(dir, 'hub.json'), 'utf8'))).toMatchObject({ url: served.url });
  }, 60_000);
});
