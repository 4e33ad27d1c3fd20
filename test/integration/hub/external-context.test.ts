/**
 * What an out-of-process driver learns of a call: the InvokeContext of docs/driver-protocol.md,
 * as it arrives over the protocol. `caller` carries only the pid the hub established, never a
 * terminal a client claimed and never any credential.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createHub } from '../../../src/main/hub/hub-core';
import type { AgentIdentity, Hub } from '../../../src/main/hub';
import { tmpDataDir } from '../../fixtures/hub-build';

// Answers `context` with the context it was sent, verbatim.
const DRIVER = `
import { createInterface } from 'node:readline';
const write = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
const info = { id: 'echo', kind: 'capability', summary: 'Echoes its invoke context' };
const op = { op: 'context', summary: 'The invoke context', mutating: false, params_schema: { type: 'object' }, result_schema: { type: 'object' } };
createInterface({ input: process.stdin }).on('line', (line) => {
  const { id, method, params } = JSON.parse(line);
  if (id === undefined) return;
  const result = { initialize: { protocol_version: '3', info }, info, channels: [{ channel: 'echo:a', labels: [], detail: {} }], ops: [op],
    doctor: { driver: 'echo', ok: true, lines: [] }, invoke: params?.context }[method];
  write(result === undefined ? { jsonrpc: '2.0', id, error: { code: -32601, message: 'no ' + method } } : { jsonrpc: '2.0', id, result });
});
`;

const open: Hub[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});

function hubWithEcho(): Hub {
  const file = join(mkdtempSync(join(tmpdir(), 'uplink-echo-')), 'echo.mjs');
  writeFileSync(file, DRIVER);
  const dir = tmpDataDir();
  const sha256 = createHash('sha256').update(readFileSync(file)).digest('hex');
  writeFileSync(
    join(dir, 'config.json'),
    JSON.stringify({ external_drivers: [{ id: 'echo', command: [process.execPath, file], integrity: { file, sha256 } }] }),
  );
  const hub = createHub({ dataDir: dir, drivers: [], watchConfig: false });
  open.push(hub);
  return hub;
}

it('sends the caller the hub established (its pid only) in the invoke context, and no caller for a call from inside the hub', async () => {
  const hub = hubWithEcho();
  const agent: AgentIdentity = { kind: 'mcp', name: 'claude-code', agent_id: 'default', session: 's1', caller: { pid: 4242 } };
  const got = (await hub.invoke('echo:a', 'context', {}, { agent, expect: 'read_only' })) as Record<string, unknown>;
  expect(got).toEqual({
    interaction: 'typed',
    agent: 'default',
    invocation_id: expect.stringMatching(/^inv-/),
    caller: { pid: 4242 },
    deadline_ms: expect.any(Number),
  });

  const unknown = (await hub.invoke('echo:a', 'context', {}, { agent: { ...agent, caller: {} }, expect: 'read_only' })) as Record<string, unknown>;
  expect(unknown.caller).toEqual({});

  const cli: AgentIdentity = { kind: 'cli', name: 'uplink-cli', agent_id: 'uplink-cli', user: 'alice' };
  const fromCli = (await hub.invoke('echo:a', 'context', {}, { agent: cli, expect: 'read_only' })) as Record<string, unknown>;
  expect(fromCli).not.toHaveProperty('caller');
  expect(fromCli.agent).toBe('uplink-cli');
});
