/**
 * The desktop driver's ops: names, schemas and the interaction kinds that can serve each one.
 * Coordinates (`bounds`, `click`) are window-relative pixels, so a `tree` element's bounds can be
 * clicked through `visual_ui` without translation.
 */
import type { InteractionKind, JsonSchema } from '../../kernel';
import type { OpSpec } from '../contract';

const SEMANTIC: InteractionKind[] = ['semantic_ui'];
const VISUAL: InteractionKind[] = ['visual_ui'];
const BOTH: InteractionKind[] = ['semantic_ui', 'visual_ui'];

const rect: JsonSchema = {
  type: 'object',
  properties: { x: { type: 'integer' }, y: { type: 'integer' }, width: { type: 'integer' }, height: { type: 'integer' } },
  required: ['x', 'y', 'width', 'height'],
};
const element: JsonSchema = {
  type: 'object',
  properties: {
    role: { type: 'string' },
    name: { type: 'string' },
    states: { type: 'array', items: { type: 'string' } },
    bounds: { anyOf: [rect, { type: 'null' }] },
    path: { type: 'string' },
    child_count: { type: 'integer' },
    /** An editable's text (never a password's); Win32 also reports other elements' MSAA values. */
    value: { type: 'string' },
    /** The element's action names, the default first (AT-SPI Action; Win32: the MSAA default action). */
    actions: { type: 'array', items: { type: 'string' } },
  },
  required: ['role', 'name', 'states', 'bounds', 'path'],
};
const path = {
  type: 'string',
  minLength: 1,
  maxLength: 512,
  description: 'element path from tree/find: /0/2/1, or //<role>[<name>] matching exactly one element',
};
const text = { type: 'string', maxLength: 10_000 };
const sensitive = { type: 'boolean', description: 'Keep the text out of previews, logs, the audit store and the result.' };
const params = (properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

/** The ops, in the order `channel_describe` lists them. */
export const DESKTOP_OPS: OpSpec[] = [
  {
    op: 'observe',
    summary: 'Title, pid, geometry, focus and the interaction kinds available for the window',
    mutating: false,
    interactions: BOTH,
    params_schema: params({}),
    result_schema: {
      type: 'object',
      properties: {
        window: { type: 'string' },
        title: { type: 'string' },
        class: { type: 'array', items: { type: 'string' } },
        pid: { type: 'integer' },
        process_name: { type: 'string' },
        geometry: rect,
        focused: { type: 'boolean' },
        interactions: { type: 'array', items: { enum: ['semantic_ui', 'visual_ui'] } },
      },
      required: ['window', 'title', 'pid', 'geometry', 'focused', 'interactions'],
    },
  },
  {
    op: 'tree',
    summary: "The window's accessibility tree (role and state names as AT-SPI's on every platform, name, window-relative bounds, path), bounded",
    mutating: false,
    interactions: SEMANTIC,
    params_schema: params({ max_depth: { type: 'integer', minimum: 0, maximum: 64 }, max_nodes: { type: 'integer', minimum: 1, maximum: 5000 } }),
    result_schema: {
      $defs: {
        node: {
          type: 'object',
          allOf: [element],
          properties: { children: { type: 'array', items: { $ref: '#/$defs/node' } } },
          required: ['children'],
        },
      },
      type: 'object',
      properties: { nodes: { type: 'array', items: { $ref: '#/$defs/node' } }, node_count: { type: 'integer' }, truncated: { type: 'boolean' } },
      required: ['nodes', 'node_count', 'truncated'],
    },
  },
  {
    op: 'find',
    summary: 'Elements by exact AT-SPI role and/or name substring (case-insensitive); at most 200',
    mutating: false,
    interactions: SEMANTIC,
    params_schema: params({ role: { type: 'string', minLength: 1 }, name: { type: 'string' } }),
    result_schema: {
      type: 'object',
      properties: { matches: { type: 'array', items: element }, count: { type: 'integer' } },
      required: ['matches', 'count'],
    },
  },
  {
    op: 'screenshot',
    summary: 'PNG of the window as it is on screen (base64), optionally scaled down to max_width',
    mutating: false,
    interactions: VISUAL,
    params_schema: params({ max_width: { type: 'integer', minimum: 16, maximum: 8192 } }),
    result_schema: {
      type: 'object',
      properties: { png_base64: { type: 'string' }, width: { type: 'integer' }, height: { type: 'integer' }, scale: { type: 'number' } },
      required: ['png_base64', 'width', 'height'],
    },
  },
  {
    op: 'activate',
    summary: "Run an element's default action (press a button, toggle a check box)",
    mutating: true,
    interactions: SEMANTIC,
    params_schema: params({ path }, ['path']),
    result_schema: {
      type: 'object',
      properties: { activated: { type: 'boolean' }, action: { type: 'string' }, element },
      required: ['activated', 'action', 'element'],
    },
  },
  {
    op: 'set-text',
    summary: "Replace an editable element's text, then read it back",
    mutating: true,
    interactions: SEMANTIC,
    params_schema: params({ path, text, sensitive }, ['path', 'text']),
    result_schema: {
      type: 'object',
      properties: { text: { type: 'string' }, confirmed: { type: 'boolean' }, element },
      required: ['text', 'confirmed', 'element'],
    },
  },
  {
    op: 'click',
    summary: 'Click at a window-relative point (focuses and raises the window first)',
    mutating: true,
    interactions: VISUAL,
    params_schema: params({ x: { type: 'integer', minimum: 0 }, y: { type: 'integer', minimum: 0 }, button: { enum: ['left', 'middle', 'right'] } }, [
      'x',
      'y',
    ]),
    result_schema: {
      type: 'object',
      properties: { clicked: { type: 'boolean' }, x: { type: 'integer' }, y: { type: 'integer' }, button: { type: 'string' } },
      required: ['clicked', 'x', 'y', 'button'],
    },
  },
  {
    op: 'type',
    summary:
      'Type text: semantic_ui inserts at the caret of the focused (or only, or `path`) editable and reads it back; visual_ui sends keystrokes to the focused window',
    mutating: true,
    interactions: BOTH,
    params_schema: params({ text: { ...text, minLength: 1 }, path, sensitive }, ['text']),
    result_schema: {
      type: 'object',
      properties: { typed: { type: 'integer' }, text: { type: 'string' }, confirmed: { type: 'boolean' }, element },
      required: ['typed'],
    },
  },
  {
    op: 'key',
    summary: 'Press a key chord: X keysym names joined by +, e.g. Return, Escape, ctrl+a, shift+Tab',
    mutating: true,
    interactions: VISUAL,
    params_schema: params({ chord: { type: 'string', minLength: 1, maxLength: 100 } }, ['chord']),
    result_schema: { type: 'object', properties: { sent: { type: 'string' } }, required: ['sent'] },
  },
];

/** The op spec by name. */
export function opSpec(op: string): OpSpec | undefined {
  return DESKTOP_OPS.find((o) => o.op === op);
}
