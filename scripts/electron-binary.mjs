// Where the Electron binary is, or why there is none: one answer for `npm start` and the Electron
// e2e test, so both follow the electron package's layout (path.txt naming a file under dist/).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** @returns {{ bin: string } | { why: string }} */
export function electronBinary() {
  try {
    const pkg = dirname(createRequire(import.meta.url).resolve('electron/package.json'));
    const pathFile = join(pkg, 'path.txt');
    if (!existsSync(pathFile))
      return {
        why: 'the Electron binary is not installed (node_modules/electron has no path.txt; run `node node_modules/electron/install.js` with network access)',
      };
    const bin = join(pkg, 'dist', readFileSync(pathFile, 'utf8').trim());
    return existsSync(bin) ? { bin } : { why: `the Electron binary is missing at ${bin}` };
  } catch {
    return { why: 'the electron package is not installed' };
  }
}
