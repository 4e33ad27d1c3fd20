/**
 * Other people's MCP clients against a real `uplink serve`: the MCP Inspector CLI and the MCP
 * Python SDK, each over stdio (`uplink mcp`, spawned from a bare environment the way a desktop
 * client does) and over Streamable HTTP with the bearer header.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { tmpDataDir } from '../fixtures/hub-build';
import { INSPECTOR_CLI, INTEROP, NODE22, run, startHub } from './helpers';
import type { Hub } from './helpers';
import { prerequisite } from '../fixtures/prerequisite';

let hub: Hub;
beforeAll(async () => {
  hub = await startHub();
});
afterAll(async () => {
  await hub?.served.stop();
});

/** What `env -i HOME=… PATH=… SHELL=… TERM=…` leaves: no UPLINK_*, no TMUX, no npm variables. */
const bareEnv = (): NodeJS.ProcessEnv => ({ HOME: tmpDataDir('uplink-interop-home-'), PATH: '/usr/local/bin:/usr/bin:/bin', SHELL: '/bin/sh', TERM: 'dumb' });
/** `uplink mcp` as a client would start it: Node 20 by absolute path, the data dir its only setting. */
const stdioServer = (): string[] => [process.execPath, hub.build.launcher, 'mcp'];

const toolNames = (out: string): string[] => (JSON.parse(out) as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
const toolText = (out: string): string => (JSON.parse(out) as { content: Array<{ text: string }> }).content[0]!.text;
const structured = (out: string): unknown => (JSON.parse(out) as { structuredContent?: unknown }).structuredContent;

describe('MCP Inspector CLI', () => {
  const inspect = (args: string[], env: NodeJS.ProcessEnv) => run(NODE22, [INSPECTOR_CLI, ...args], { env });

  it('over stdio from a bare environment: lists the tools, calls channel_list and channel_doctor', async () => {
    const target = ['-e', `UPLINK_DATA_DIR=${hub.dataDir}`, '--', ...stdioServer()];
    const listed = await inspect(['--method', 'tools/list', ...target], bareEnv());
    expect(listed.code, listed.stderr).toBe(0);
    expect(toolNames(listed.stdout)).toEqual(expect.arrayContaining(['channel_list', 'channel_doctor', 'channel_act']));
    const channels = await inspect(['--method', 'tools/call', '--tool-name', 'channel_list', ...target], bareEnv());
    expect(channels.code, channels.stderr).toBe(0);
    expect(toolText(channels.stdout)).toContain('test:alpha');
    const doctor = await inspect(['--method', 'tools/call', '--tool-name', 'channel_doctor', ...target], bareEnv());
    expect(doctor.code, doctor.stderr).toBe(0);
    expect(structured(doctor.stdout)).toMatchObject({ ok: true });
  });

  it('over HTTP with its header option: portable tool schemas, channel_list and channel_doctor', async () => {
    const target = [hub.served.mcp_url, '--header', `Authorization: Bearer ${hub.token}`];
    // --strict exits 6 on any error-severity schema portability problem.
    const listed = await inspect(['--method', 'tools/list', '--strict', ...target], bareEnv());
    expect(listed.code, listed.stderr).toBe(0);
    expect(toolNames(listed.stdout)).toContain('channel_list');
    const channels = await inspect(['--method', 'tools/call', '--tool-name', 'channel_list', ...target], bareEnv());
    expect(channels.code, channels.stderr).toBe(0);
    expect(toolText(channels.stdout)).toContain('test:alpha');
    const doctor = await inspect(['--method', 'tools/call', '--tool-name', 'channel_doctor', ...target], bareEnv());
    expect(structured(doctor.stdout)).toMatchObject({ ok: true });
    const refused = await inspect(['--method', 'tools/list', hub.served.mcp_url, '--header', 'Authorization: Bearer not-a-token'], bareEnv());
    expect(refused.code).not.toBe(0);
  });
});

const PYTHON = join(INTEROP, '.venv/bin/python');
/** What the Python SDK client lacks here, or undefined when it can run. */
function pythonLacks(): string | undefined {
  if (!existsSync(PYTHON)) return 'test/interop/.venv';
  const probe = spawnSync(PYTHON, ['-c', 'import mcp'], { encoding: 'utf8' });
  if (probe.status !== 0) return `the mcp package in test/interop/.venv (${probe.stderr.trim().split('\n').at(-1)})`;
  return undefined;
}
const lacks = pythonLacks();
const python = prerequisite(lacks ?? 'the MCP Python SDK', !lacks, 'bash test/interop/setup.sh (Debian needs python3-venv, and pip the package index)');

describe.skipIf(python.skip)('MCP Python SDK client', () => {
  beforeAll(python.check);
  const client = join(INTEROP, 'python_client.py');
  interface Seen {
    server: string;
    tools: string[];
    is_error: boolean;
    text: string;
    channels: string[];
  }
  const expectUplink = (out: string): void => {
    const seen = JSON.parse(out) as Seen;
    expect(seen.server).toBe('uplink');
    expect(seen.tools).toEqual(expect.arrayContaining(['channel_list', 'channel_doctor']));
    expect(seen.is_error).toBe(false);
    expect(seen.text).toContain('test:alpha');
    // The SDK checked structuredContent against the tool's outputSchema before handing it over.
    expect(seen.channels).toContain('test:alpha');
  };

  it('over stdio from a bare environment: initialize, list tools, call channel_list', async () => {
    const ran = await run(PYTHON, [client, 'stdio', ...stdioServer()], { env: { ...bareEnv(), UPLINK_DATA_DIR: hub.dataDir } });
    expect(ran.code, ran.stderr).toBe(0);
    expectUplink(ran.stdout);
  });

  it('over HTTP with the bearer token: initialize, list tools, call channel_list', async () => {
    const ran = await run(PYTHON, [client, 'http', hub.served.mcp_url, hub.token], { env: bareEnv() });
    expect(ran.code, ran.stderr).toBe(0);
    expectUplink(ran.stdout);
  });
});
