/**
 * docs/schemas/driver-protocol.schema.json is the TypeBox declarations the host and `uplink driver
 * check` validate with, published: it fails here when someone changes one without the other
 * (`npm run schemas` regenerates it), and docs/driver-protocol.md names every payload it defines.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { PROTOCOL_SCHEMAS, protocolSchemaDocument } from '../../../src/main/drivers/protocol-schemas';
import { PROTOCOL_VERSION } from '../../../src/main/drivers/external/wire';

const ROOT = join(__dirname, '..', '..', '..');
const published = JSON.parse(readFileSync(join(ROOT, 'docs/schemas/driver-protocol.schema.json'), 'utf8')) as { $defs: Record<string, unknown> };
const page = readFileSync(join(ROOT, 'docs/driver-protocol.md'), 'utf8');

/** `value` with every `$ref` into `$defs` replaced by what it names. */
function inlined(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(inlined);
  const ref = (value as { $ref?: unknown }).$ref;
  if (typeof ref === 'string') return inlined(published.$defs[ref.replace('#/$defs/', '')]);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, inlined(v)]));
}

describe('the published driver protocol schemas', () => {
  it('are exactly what the TypeBox declarations generate (run `npm run schemas` after changing them)', () => {
    expect(published).toEqual(protocolSchemaDocument(PROTOCOL_VERSION));
  });

  it('validate what the TypeBox schemas validate: each payload, its $refs followed, is the declaration itself', () => {
    for (const [name, schema] of Object.entries(PROTOCOL_SCHEMAS)) expect(inlined(published.$defs[name]), name).toEqual(JSON.parse(JSON.stringify(schema)));
  });

  it('compile as Draft 2020-12 under strict mode, and check a payload through a $ref', () => {
    const ajv = new Ajv2020({ strict: true });
    ajv.addSchema(published, 'driver-protocol');
    const check = (name: string, value: unknown): boolean => ajv.validate(`driver-protocol#/$defs/${name}`, value);
    expect(check('InitializeResult', { protocol_version: '3', info: { id: 'notes', kind: 'capability', summary: 'Notes' } })).toBe(true);
    expect(check('InitializeResult', { protocol_version: '3', info: { id: 'notes', kind: 'tool', summary: 'Notes' } })).toBe(false);
    expect(check('OpSpec', { op: 'read', mutating: false, params_schema: {}, result_schema: {} })).toBe(false); // summary is required
    expect(check('DriverError', { kind: 'NotFound', message: 'gone', evidence: { lines: ['a'], exit: 1 } })).toBe(true);
    expect(check('DriverError', { kind: 'Failed', message: 'gone' })).toBe(false);
  });

  it('are each named by docs/driver-protocol.md, whose every schema link resolves', () => {
    const linked = [...page.matchAll(/driver-protocol\.schema\.json#\/\$defs\/(\w+)/g)].map((m) => m[1]!);
    expect(
      linked.filter((name) => !(name in published.$defs)),
      'links to no $defs entry',
    ).toEqual([]);
    expect(
      Object.keys(published.$defs).filter((name) => !linked.includes(name)),
      'payloads the page never links',
    ).toEqual([]);
  });
});
