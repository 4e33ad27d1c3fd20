/**
 * docs/panel-protocol.schema.json is the panel protocol's declarations as they are now: the test
 * fails when a method, event or frame changed and the file was not regenerated, and checks the
 * document is valid Draft 2020-12 that validates real frames. Regenerate with
 * `UPLINK_WRITE_SCHEMAS=1 npx vitest run test/unit/panel/panel-schema.test.ts` (then prettier).
 */
import { describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv2020 from 'ajv/dist/2020';
import { panelProtocolSchema } from '../../../src/shared/panel-schema';
import { PANEL_EVENT_NAMES, PANEL_METHODS } from '../../../src/shared/panel-channels';

const FILE = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/panel-protocol.schema.json');

describe('docs/panel-protocol.schema.json', () => {
  it('is what the declarations generate now', () => {
    const generated = panelProtocolSchema();
    if (process.env.UPLINK_WRITE_SCHEMAS === '1') writeFileSync(FILE, `${JSON.stringify(generated, null, 2)}\n`);
    const published = JSON.parse(readFileSync(FILE, 'utf8')) as unknown;
    expect(published, 'stale: regenerate it with UPLINK_WRITE_SCHEMAS=1 npx vitest run test/unit/panel/panel-schema.test.ts').toEqual(generated);
  });

  it('names every method and event, compiles strictly, and validates frames both ways', () => {
    const schema = panelProtocolSchema();
    const defs = Object.keys(schema.$defs as object);
    for (const m of PANEL_METHODS) expect(defs).toEqual(expect.arrayContaining([`call.${m}.params`, `call.${m}.result`]));
    for (const e of PANEL_EVENT_NAMES) expect(defs).toContain(`event.${e}`);
    const ajv = new Ajv2020({ strict: true, allErrors: false });
    const frame = ajv.compile(schema);
    expect(frame({ t: 'hello', key: 'k' })).toBe(true);
    expect(frame({ t: 'call', id: 1, method: 'listPendingApprovals', params: {} })).toBe(true);
    expect(frame({ t: 'result', id: 1, result: [] })).toBe(true);
    expect(frame({ t: 'error', id: null, error: { code: 'unauthorized', message: 'm' } })).toBe(true);
    expect(frame({ t: 'call', id: 1, method: 'rm -rf', params: {} })).toBe(false);
    const decide = ajv.compile({ ...schema, anyOf: undefined, $ref: '#/$defs/call.decide.params' });
    expect(decide({ approval_id: 'appr-1', decision: 'session' })).toBe(true);
    expect(decide({ approval_id: 'appr-1', decision: 'yes' })).toBe(false);
  });
});
