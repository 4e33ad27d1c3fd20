import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../..', import.meta.url));

describe('electronegativity', () => {
  it('finds no high-severity issue in the source', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'uplink-eneg-')), 'findings.csv');
    const bin = join(root, 'node_modules/@doyensec/electronegativity/dist/index.js');
    await new Promise<void>((resolve, reject) =>
      execFile(process.execPath, [bin, '-i', join(root, 'src'), '-o', out, '-r', '-v', 'false', '-e', '45.0.0'], { timeout: 90_000 }, (error) => (error ? reject(error) : resolve())),
    );
    const rows = readFileSync(out, 'utf8').trim().split('\n').slice(1);
    const high = rows.filter((r) => /^[A-Z_]+,"(HIGH|CRITICAL)"/.test(r));
    expect(high, high.join('\n')).toEqual([]);
    // Sanity: the scan ran over our Electron code (it reports at least the CSP note).
    expect(rows.length).toBeGreaterThan(0);
  }, 120_000);
});
