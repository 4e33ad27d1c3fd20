/**
 * The input a provider receives is the validated input with its schema's defaults filled in; the
 * caller's object is never changed, outputs are never defaulted, and errors still name a pointer
 * and keyword only.
 */
import { describe, expect, it } from 'vitest';
import { Runtime, type ProviderCall, type RuntimeEvent, type SoftwareUseError } from '../../../src/main/kernel';
import { provider, request, spec } from './helpers';

const SECRET = 'sk-live-SECRET-0123456789';
const defaulted = spec({
  input_schema: {
    type: 'object',
    properties: {
      channel: { type: 'string', pattern: '^tmux:' },
      args: {
        type: 'object',
        properties: { lines: { type: 'integer', maximum: 10, default: 5 }, tag: { type: 'string', maxLength: 3 } },
        additionalProperties: false,
      },
    },
    required: ['channel', 'args'],
  },
  output_schema: { type: 'object', properties: { text: { type: 'string' }, extra: { type: 'string', default: 'filled' } }, required: ['text'] },
});

function rig() {
  const calls: ProviderCall[] = [];
  const rt = new Runtime();
  rt.register(
    provider('uplink/test', [{ spec: defaulted, interactions: ['typed'] }], async (call) => {
      calls.push(call);
      return { output: { text: 'ok' } };
    }),
  );
  const live: RuntimeEvent[] = [];
  rt.subscribe((e) => live.push(e));
  return { rt, calls, live };
}

async function settled(rt: Runtime, id: string): Promise<void> {
  for (let i = 0; i < 100 && !(await rt.events(id)).terminal; i++) await new Promise((r) => setTimeout(r, 5));
}

describe('input defaults', () => {
  it("the provider receives an omitted property as its schema default; the caller's input is untouched", async () => {
    const { rt, calls } = rig();
    const input = { channel: 'tmux:%1', args: {} };
    const req = request({ capability_id: defaulted.id, input });
    await rt.start(req);
    await settled(rt, req.invocation_id);
    expect(calls[0]!.request.input).toEqual({ channel: 'tmux:%1', args: { lines: 5 } });
    expect(input).toEqual({ channel: 'tmux:%1', args: {} });
    expect((await rt.get(req.invocation_id)).result).toEqual({ output: { text: 'ok' } });
  });

  it('a given value is kept, and a string bound counts code points', async () => {
    const { rt, calls } = rig();
    const req = request({ capability_id: defaulted.id, input: { channel: 'tmux:%1', args: { lines: 9, tag: '😀😀😀' } } });
    await rt.start(req);
    await settled(rt, req.invocation_id);
    expect(calls[0]!.request.input).toEqual({ channel: 'tmux:%1', args: { lines: 9, tag: '😀😀😀' } });
  });

  for (const [what, input] of [
    ['a secret failing a pattern', { channel: SECRET, args: {} }],
    ['a secret beside an omitted defaulted arg', { channel: 'tmux:%1', args: { tag: SECRET } }],
  ] as const) {
    it(`${what} is named by pointer and keyword only`, async () => {
      const { rt, calls, live } = rig();
      let error: SoftwareUseError | undefined;
      await rt.start(request({ capability_id: defaulted.id, input })).catch((e: SoftwareUseError) => (error = e));
      expect(error?.code).toBe('input_schema_violation');
      expect(error?.message).toMatch(/at JSON pointer "\/(channel|args\/tag)" \(keyword: (pattern|maxLength)\)/);
      expect(error?.message).not.toContain('SECRET');
      expect(calls).toHaveLength(0);
      expect(live).toEqual([]);
    });
  }
});
