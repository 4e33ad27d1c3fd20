/** The tool definitions are portable: strict JSON Schema, the SDK's own Tool shape, every hint chosen. */
import { describe, expect, it } from 'vitest';
import Ajv2020 from 'ajv/dist/2020.js';
import { ToolSchema } from '@modelcontextprotocol/sdk/types.js';
import { TOOLS } from '../../../src/main/edges/mcp/tools';

describe('tool schemas', () => {
  it.each(TOOLS.map((t) => [t.name, t] as const))('%s compiles its inputSchema and outputSchema under strict 2020-12 Ajv', (_, tool) => {
    const ajv = new Ajv2020({ strict: true });
    expect(() => ajv.compile(tool.inputSchema)).not.toThrow();
    if (tool.outputSchema) expect(() => ajv.compile(tool.outputSchema!)).not.toThrow();
  });

  it("every tool whose result has a fixed shape declares it; the op tools answer with the op's own result", () => {
    expect(TOOLS.filter((t) => !t.outputSchema).map((t) => t.name)).toEqual(['channel_observe', 'channel_act']);
  });

  it('no schema uses a type union (some clients cannot read them)', () => {
    const unions: string[] = [];
    const walk = (node: unknown, path: string): void => {
      if (node === null || typeof node !== 'object') return;
      if (Array.isArray((node as { type?: unknown }).type)) unions.push(path);
      for (const [k, v] of Object.entries(node)) walk(v, `${path}/${k}`);
    };
    for (const t of TOOLS) walk(t, t.name);
    expect(unions).toEqual([]);
  });

  it('every tool passes the SDK ToolSchema parse and sets all five annotations', () => {
    for (const tool of TOOLS) {
      const parsed = ToolSchema.safeParse(tool);
      expect(parsed.success, `${tool.name}: ${parsed.error?.message}`).toBe(true);
      expect(Object.keys(tool.annotations).sort()).toEqual(['destructiveHint', 'idempotentHint', 'openWorldHint', 'readOnlyHint', 'title']);
    }
  });

  it('only channel_act is destructive; only channel_act and channel_send change anything', () => {
    const hints = Object.fromEntries(TOOLS.map((t) => [t.name, t.annotations]));
    expect(TOOLS.filter((t) => t.annotations.destructiveHint).map((t) => t.name)).toEqual(['channel_act']);
    expect(
      TOOLS.filter((t) => !t.annotations.readOnlyHint)
        .map((t) => t.name)
        .sort(),
    ).toEqual(['channel_act', 'channel_send']);
    expect(hints.channel_act).toMatchObject({ idempotentHint: false, openWorldHint: true });
    expect(hints.channel_list).toMatchObject({ idempotentHint: true, openWorldHint: false });
  });
});
