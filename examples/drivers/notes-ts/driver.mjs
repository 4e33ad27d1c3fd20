#!/usr/bin/env node
// @ts-check
/**
 * Notes in a directory, as an Uplink driver written with the TypeScript SDK (`uplink/driver-sdk`).
 *
 * Each `<name>.md` file in the notes directory is a channel `notes:<name>`. Ops: `read` and
 * `search` (read-only), `wait-for` (read-only, waits until a note contains a text), `append`
 * (mutating: the operator approves it). The directory is the first argument, else $NOTES_DIR,
 * else `notes` in the working directory (the hub starts drivers in its data directory).
 */
import { appendFile, mkdir, readFile, readdir, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';

// The hub runs its own copy of the file it admitted (in its data directory) and names the installed
// one in UPLINK_DRIVER_FILE: the SDK is found from there, as a static import would from here.
const installed = process.env.UPLINK_DRIVER_FILE ?? fileURLToPath(import.meta.url);
/** @type {typeof import('uplink/driver-sdk')} */
const sdk = await import(pathToFileURL(createRequire(installed).resolve('uplink/driver-sdk')).href);
const { DriverError, serveDriver } = sdk;

const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const MAX_APPEND = 64 * 1024;
const MAX_NOTE = 1024 * 1024;
const root = resolve(process.argv[2] ?? process.env.NOTES_DIR ?? 'notes');
const LIST_HINT = 'list the notes with `uplink channels`';

/** @param {string} name */
function notePath(name) {
  if (!NAME.test(name))
    throw new DriverError('Invalid', `${JSON.stringify(name)} is not a note name`, { hint: 'names are letters, digits, - and _ (up to 64)' });
  return join(root, `${name}.md`);
}

/** @param {string} name */
async function readNote(name) {
  try {
    const text = await readFile(notePath(name), 'utf8');
    return text.slice(0, MAX_NOTE);
  } catch (e) {
    if (/** @type {NodeJS.ErrnoException} */ (e).code === 'ENOENT') throw new DriverError('NotFound', `no note named ${name}`, { hint: LIST_HINT });
    throw e;
  }
}

async function noteNames() {
  try {
    return (await readdir(root))
      .filter((f) => f.endsWith('.md') && NAME.test(f.slice(0, -3)))
      .map((f) => f.slice(0, -3))
      .sort();
  } catch {
    return [];
  }
}

/** @type {import('uplink/driver-sdk').OpSpec[]} */
const OPS = [
  {
    op: 'read',
    summary: "The note's text",
    mutating: false,
    params_schema: { type: 'object', additionalProperties: false, properties: {} },
    result_schema: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
  },
  {
    op: 'append',
    summary: 'Append a line of text to the note (creates it)',
    mutating: true,
    params_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['text'],
      properties: { text: { type: 'string', minLength: 1, maxLength: MAX_APPEND } },
    },
    result_schema: { type: 'object', required: ['bytes'], properties: { bytes: { type: 'integer' } } },
  },
  {
    op: 'search',
    summary: 'Lines of the note that contain a text (case-insensitive)',
    mutating: false,
    params_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['query'],
      properties: { query: { type: 'string', minLength: 1, maxLength: 256 }, limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
    },
    result_schema: {
      type: 'object',
      required: ['matches'],
      properties: {
        matches: { type: 'array', items: { type: 'object', required: ['line', 'text'], properties: { line: { type: 'integer' }, text: { type: 'string' } } } },
      },
    },
  },
  {
    op: 'wait-for',
    summary: 'Wait until the note contains a text (another agent writing it)',
    mutating: false,
    params_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['text'],
      properties: { text: { type: 'string', minLength: 1, maxLength: 256 }, timeout_ms: { type: 'integer', minimum: 0, maximum: 600000, default: 30000 } },
    },
    result_schema: { type: 'object', required: ['found'], properties: { found: { type: 'boolean' } } },
  },
];

/** @type {import('uplink/driver-sdk').Driver} */
const driver = {
  info: () => ({ id: 'notes', kind: 'capability', summary: `Notes in ${root}: one channel per <name>.md` }),
  channels: async () => (await noteNames()).map((n) => ({ channel: `notes:${n}`, labels: [n], detail: { file: join(root, `${n}.md`) } })),
  ops: () => OPS,
  send: async () => {
    throw new DriverError('Invalid', 'notes takes no messages', { hint: 'use its ops instead (uplink ops <channel>)' });
  },
  recv: async (cursor) => ({ items: [], next_cursor: cursor ?? 0 }),
  doctor: async () => {
    const ok = await stat(root).then(
      (s) => s.isDirectory(),
      () => false,
    );
    return {
      driver: 'notes',
      ok,
      lines: [
        ok
          ? `${(await noteNames()).length} notes in ${root}`
          : `the notes directory ${root} does not exist: create it, or pass another one as the first argument`,
      ],
    };
  },
  /** @returns {Promise<import('uplink/driver-sdk').JsonValue>} */
  async invoke(addr, op, args, _ctx, signal) {
    const a = /** @type {Record<string, any>} */ (args);
    switch (op) {
      case 'read':
        return { text: await readNote(addr) };
      case 'append': {
        const path = notePath(addr);
        await mkdir(root, { recursive: true });
        await appendFile(path, a.text.endsWith('\n') ? a.text : `${a.text}\n`);
        return { bytes: (await stat(path)).size };
      }
      case 'search': {
        const query = String(a.query).toLowerCase();
        const matches = [];
        for (const [i, line] of (await readNote(addr)).split('\n').entries()) {
          if (line.toLowerCase().includes(query)) matches.push({ line: i + 1, text: line });
          if (matches.length >= (a.limit ?? 20)) break;
        }
        return { matches };
      }
      case 'wait-for': {
        const deadline = Date.now() + (a.timeout_ms ?? 30000);
        for (;;) {
          if (signal?.aborted) throw new DriverError('Timeout', 'the call was cancelled');
          const text = await readNote(addr).catch((e) => {
            if (e instanceof DriverError && e.kind === 'NotFound') return '';
            throw e;
          });
          if (text.includes(a.text)) return { found: true };
          if (Date.now() >= deadline) return { found: false };
          await sleep(100, undefined, { signal }).catch(() => {});
        }
      }
      default:
        throw new DriverError('NotFound', `no op ${JSON.stringify(op)}`, { hint: `list the channel's ops (${OPS.map((o) => o.op).join(', ')})` });
    }
  },
  preview: async (addr, op, args) =>
    op === 'append' ? { text: `append ${String(/** @type {any} */ (args).text ?? '').length} characters to note ${addr}` } : undefined,
};

await serveDriver(driver);
