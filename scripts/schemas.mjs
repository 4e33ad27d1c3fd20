#!/usr/bin/env node
// Writes docs/schemas/driver-protocol.schema.json from the TypeBox declarations the hub and
// `uplink driver check` validate with (src/main/drivers/protocol-schemas.ts), so the published
// schemas are those very schemas. `--check` writes nothing and exits 1 when the file is stale.
import { build } from 'esbuild';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { tmpdir } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import prettier from 'prettier';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const SCHEMA_FILE = join(root, 'docs/schemas/driver-protocol.schema.json');

/** The published document's text, formatted as the repository's Prettier would. */
export async function schemaText() {
  const dir = mkdtempSync(join(tmpdir(), 'uplink-schemas-'));
  try {
    const entry = join(dir, 'entry.ts');
    writeFileSync(
      entry,
      `export { protocolSchemaDocument } from ${JSON.stringify(join(root, 'src/main/drivers/protocol-schemas.ts'))};\n` +
        `export { PROTOCOL_VERSION } from ${JSON.stringify(join(root, 'src/main/drivers/external/wire.ts'))};\n`,
    );
    const out = join(dir, 'schemas.mjs');
    await build({
      entryPoints: [entry],
      outfile: out,
      bundle: true,
      platform: 'node',
      format: 'esm',
      logLevel: 'warning',
      nodePaths: [join(root, 'node_modules')],
    });
    const { protocolSchemaDocument, PROTOCOL_VERSION } = await import(pathToFileURL(out).href);
    const json = JSON.stringify(protocolSchemaDocument(PROTOCOL_VERSION), null, 2);
    const options = (await prettier.resolveConfig(SCHEMA_FILE)) ?? {};
    return prettier.format(json, { ...options, filepath: SCHEMA_FILE });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const text = await schemaText();
  let current;
  try {
    current = readFileSync(SCHEMA_FILE, 'utf8');
  } catch {
    current = undefined;
  }
  if (process.argv.includes('--check')) {
    if (current !== text) {
      console.error(
        'uplink error [schemas:Invalid]: docs/schemas/driver-protocol.schema.json differs from src/main/drivers/protocol-schemas.ts — hint: run `npm run schemas`',
      );
      process.exit(1);
    }
  } else if (current !== text) {
    mkdirSync(dirname(SCHEMA_FILE), { recursive: true });
    writeFileSync(SCHEMA_FILE, text);
    console.log('wrote docs/schemas/driver-protocol.schema.json');
  }
}
