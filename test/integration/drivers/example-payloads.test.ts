/**
 * The example drivers (examples/drivers/*), each its real process, answer every method with a
 * payload the published schemas (docs/schemas/driver-protocol.schema.json) accept, and every
 * request the hub would send them is one those schemas accept too: a driver written from the page
 * and its schemas speaks with the hub, and the examples show how.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DriverClient } from '../../fixtures/driver-client';
import { ROOT } from '../../fixtures/hub-build';

const EXAMPLES = {
  'notes-ts': [process.execPath, join(ROOT, 'examples/drivers/notes-ts/driver.mjs')],
  'notes-py': ['python3', join(ROOT, 'examples/drivers/notes-py/driver.py')],
};

const ajv = new Ajv2020({ strict: true, allErrors: true });
ajv.addSchema(JSON.parse(readFileSync(join(ROOT, 'docs/schemas/driver-protocol.schema.json'), 'utf8')), 'protocol');

/** `value` against the published payload `name`: the validator's errors, [] when it conforms. */
function problems(name: string, value: unknown): string[] {
  const validate = ajv.getSchema(`protocol#/$defs/${name}`);
  if (!validate) throw new Error(`no payload ${name} in the published schemas`);
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${name}${e.instancePath} ${e.message ?? ''}`);
}

beforeAll(() => {
  // The TS example imports the package's `uplink/driver-sdk`, i.e. dist/driver-sdk.mjs.
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts/build.mjs'), 'driver-sdk'], { cwd: ROOT, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
});

let client: DriverClient | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
});

describe.each(Object.entries(EXAMPLES))('example driver %s', (_name, command) => {
  it('answers every method, and fails, with payloads the published schemas accept', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'uplink-notes-'));
    writeFileSync(join(dir, 'todo.md'), 'buy milk\nCall Bob\n');
    client = DriverClient.spawn([...command, dir]);
    const c = client;
    const bad: string[] = [];
    /** Sends `method` with params the hub's schema `paramsName` accepts; checks the answer against `resultName`. */
    const exchange = async (method: string, paramsName: string, params: unknown, resultName: string): Promise<unknown> => {
      bad.push(...problems(paramsName, params));
      const answer = await c.request(method, params);
      if (answer.error) throw new Error(`${method} failed: ${JSON.stringify(answer.error)}`);
      bad.push(...problems(resultName, answer.result));
      return answer.result;
    };

    const init = (await exchange('initialize', 'InitializeParams', { protocol_version: '3', uplink_version: '0.1.0' }, 'InitializeResult')) as {
      extensions?: string[];
    };
    await exchange('info', 'EmptyParams', {}, 'DriverInfo');
    await exchange('channels', 'EmptyParams', {}, 'ChannelsResult');
    const ops = (await exchange('ops', 'EmptyParams', {}, 'OpsResult')) as Array<{ op: string; mutating?: boolean }>;
    expect(ops.length).toBeGreaterThan(0);
    await exchange('doctor', 'EmptyParams', {}, 'DoctorReport');
    const context = { interaction: 'typed', agent: 'default', invocation_id: 'inv-1', caller: { pid: 4242 }, deadline_ms: 5000 };
    // An op's result is any JSON value that its own result_schema accepts (the hub checks both).
    const declared = new Ajv2020({ strict: false });
    for (const [op, args] of [
      ['read', {}],
      ['search', { query: 'bob', limit: 20 }],
    ] as const) {
      const result = await exchange('invoke', 'InvokeParams', { addr: 'todo', op, args, context }, 'InvokeResult');
      const spec = ops.find((o) => o.op === op) as { result_schema: object } | undefined;
      expect(declared.validate(spec!.result_schema, result), `${op}: ${JSON.stringify(declared.errors)}`).toBe(true);
    }
    expect(init.extensions).toContain('preview');
    await exchange('preview', 'PreviewParams', { addr: 'todo', op: 'append', args: { text: 'pay rent' } }, 'PreviewResult');

    const failed = await c.request('invoke', { addr: 'nope', op: 'read', args: {}, context });
    expect(failed.error).toBeDefined();
    bad.push(...problems('RpcError', failed.error), ...problems('DriverError', failed.error?.data));
    bad.push(...problems('CancelParams', { id: 99 }));

    expect(init.extensions).toContain('shutdown');
    await exchange('shutdown', 'EmptyParams', {}, 'NullResult');
    expect(bad).toEqual([]);
    expect(c.junk).toEqual([]);
  });
});
