#!/usr/bin/env node
// The Electron security scan, a step of `npm test` of its own: @doyensec/electronegativity over
// src/, failing on any high or critical finding (and on a scan that found nothing at all, which
// would mean it did not look at our Electron code).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dir = mkdtempSync(join(tmpdir(), 'uplink-eneg-'));
const out = join(dir, 'findings.csv');
try {
  const bin = join(root, 'node_modules/@doyensec/electronegativity/dist/index.js');
  execFileSync(process.execPath, [bin, '-i', join(root, 'src'), '-o', out, '-r', '-v', 'false', '-e', '45.0.0'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 120_000,
  });
  const rows = readFileSync(out, 'utf8').trim().split('\n').slice(1);
  const high = rows.filter((r) => /^[A-Z_]+,"(HIGH|CRITICAL)"/.test(r));
  if (rows.length === 0) {
    console.error('uplink error [core:Invalid]: electronegativity reported nothing — hint: check that it scanned src/main/electron');
    process.exitCode = 1;
  } else if (high.length > 0) {
    console.error(`uplink error [core:Rejected]: electronegativity found ${high.length} high-severity issue(s) — hint: fix them:\n${high.join('\n')}`);
    process.exitCode = 1;
  } else {
    console.log(`electronegativity: ${rows.length} finding(s), none high or critical`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
