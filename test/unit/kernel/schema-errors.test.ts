/** The one wording of a schema failure outside the runtime: pointer, phrase, keyword; never the value. */
import { describe, expect, it } from 'vitest';
import { describeSchemaError, schemaValidator } from '../../../src/main/kernel';

const SCHEMA = {
  type: 'object',
  required: ['id', 'mode'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: '^[a-z]+$' },
    mode: { enum: ['once', 'deny'] },
    v: { const: 1 },
    n: { type: 'integer', minimum: 10 },
    list: { type: 'array', items: { type: 'object', additionalProperties: { type: 'string' } } },
  },
};

function first(value: unknown): string {
  const validate = schemaValidator(SCHEMA);
  expect(validate(value)).toBe(false);
  return describeSchemaError(validate.errors);
}

describe('describeSchemaError', () => {
  it('says where, what and which keyword', () => {
    expect(first({ id: 'a' })).toBe('/ lacks the property "mode" (required)');
    expect(first({ id: 'a', mode: 'once', n: 3 })).toBe('/n must be >= 10 (minimum)');
    expect(first({ id: 'A', mode: 'once' })).toBe('/id must match pattern "^[a-z]+$" (pattern)');
    expect(first({ id: 'a', mode: 'always' })).toBe('/mode must be one of "once", "deny" (enum)');
    expect(first({ id: 'a', mode: 'once', v: 2 })).toBe('/v must be 1 (const)');
    expect(first({ id: 'a', mode: 'once', list: [{ x: 1 }] })).toBe('/list/0/x must be string (type)');
  });

  it('names a property that is not allowed, never a value, and stays one line', () => {
    expect(first({ id: 'a', mode: 'once', password: 'hunter2' })).toBe('/ has the property "password", which is not allowed (additionalProperties)');
    expect(first({ id: 'a', mode: 'hunter2' })).not.toContain('hunter2');
    const line = first({ id: 'a', mode: 'once', list: [{ 'a\nb': 1 }] });
    expect(line).toBe('/list/0/a\\u000ab must be string (type)');
    expect(first({ id: 'a', mode: 'once', list: [{ ['k'.repeat(5000)]: 1 }] }).length).toBeLessThan(300);
  });

  it('says something when there is no error to read', () => {
    expect(describeSchemaError(null)).toBe('/ does not match its schema (unknown)');
  });
});
