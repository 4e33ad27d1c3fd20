import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { choosePanelOpener, electronApp } from '../../../src/main/edges/demo/open-panel';

const found = () => ({ bin: '/x/electron' });
const none = () => ({ why: 'the Electron binary is not installed' });

describe('where the demo opens its panel', () => {
  it("in the Uplink app (Electron) on the user's display when the binary is there", () => {
    expect(choosePanelOpener({ ownDisplay: true, electron: found, xdgOpen: () => true })).toEqual({ kind: 'electron', bin: '/x/electron' });
  });

  it("in the browser on the user's display when there is no Electron binary", () => {
    expect(choosePanelOpener({ ownDisplay: true, electron: none, xdgOpen: () => true })).toEqual({ kind: 'browser' });
  });

  it('only the printed URL with neither, or on a private display (even with Electron)', () => {
    expect(choosePanelOpener({ ownDisplay: true, electron: none, xdgOpen: () => false })).toEqual({ kind: 'print' });
    expect(choosePanelOpener({ ownDisplay: false, electron: found, xdgOpen: () => true })).toEqual({ kind: 'print' });
  });
});

describe('the Electron app the demo looks for', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  /** A checkout as the electron package lays itself out; each flag leaves one piece out. */
  const checkout = (o: { pkg?: boolean; pathTxt?: boolean; bin?: boolean; built?: boolean }): string => {
    const root = mkdtempSync(join(tmpdir(), 'uplink-open-panel-'));
    dirs.push(root);
    writeFileSync(join(root, 'package.json'), '{"name":"uplink"}');
    const pkg = join(root, 'node_modules', 'electron');
    if (o.pkg !== false) {
      mkdirSync(join(pkg, 'dist'), { recursive: true });
      writeFileSync(join(pkg, 'package.json'), '{"name":"electron","main":"index.js"}');
      if (o.pathTxt !== false) writeFileSync(join(pkg, 'path.txt'), 'electron');
      if (o.bin !== false) writeFileSync(join(pkg, 'dist', 'electron'), '');
    }
    if (o.built !== false) {
      mkdirSync(join(root, 'dist', 'electron'), { recursive: true });
      writeFileSync(join(root, 'dist', 'electron', 'main.cjs'), '');
    }
    return root;
  };

  it('is found where path.txt names a binary and the app is built', () => {
    const root = checkout({});
    expect(electronApp(root)).toEqual({ bin: join(root, 'node_modules', 'electron', 'dist', 'electron') });
  });

  it('says why not: no package, no download (no path.txt), a missing binary, an unbuilt app', () => {
    expect(electronApp(checkout({ pkg: false })).why).toMatch(/package is not installed/);
    expect(electronApp(checkout({ pathTxt: false })).why).toMatch(/binary is not installed/);
    expect(electronApp(checkout({ bin: false })).why).toMatch(/binary is missing/);
    expect(electronApp(checkout({ built: false })).why).toMatch(/not built/);
  });
});
