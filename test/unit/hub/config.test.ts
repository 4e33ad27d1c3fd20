/** The config file: defaults, validation with locations, last-good on breakage, atomic edits, watching. */
import { describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigStore, DEFAULT_APPROVAL_TIMEOUT_MS, MAX_CONFIG_BYTES, MAX_CONFIG_DEPTH } from '../../../src/main/hub/config/store';
import { jsonDepth } from '../../../src/main/hub/bounds';
import { jsonErrorLocation } from '../../../src/main/hub/config/json-locate';

const fresh = (): string => join(mkdtempSync(join(tmpdir(), 'uplink-cfg-')), 'config.json');

describe('ConfigStore', () => {
  it('a missing file gives the defaults', () => {
    const c = new ConfigStore(fresh());
    expect(c.get().approvals).toEqual({ timeout_ms: DEFAULT_APPROVAL_TIMEOUT_MS, when_no_panel: 'wait', rules: [] });
    expect(c.error()).toBeUndefined();
  });

  it('approvals.when_no_panel is "wait" or "deny"; anything else breaks the file', () => {
    const path = fresh();
    writeFileSync(path, JSON.stringify({ approvals: { when_no_panel: 'deny' } }));
    expect(new ConfigStore(path).get().approvals.when_no_panel).toBe('deny');
    const other = fresh();
    writeFileSync(other, JSON.stringify({ approvals: { when_no_panel: 'later' } }));
    const c = new ConfigStore(other);
    expect(c.error()).toMatch(/when_no_panel/);
    expect(c.get().approvals.when_no_panel).toBe('wait');
  });

  it('a syntax error keeps the last good config and names line and column', () => {
    const path = fresh();
    writeFileSync(path, JSON.stringify({ approvals: { timeout_ms: 5000 } }));
    const c = new ConfigStore(path);
    writeFileSync(path, '{\n  "approvals": {\n    "timeout_ms": 5000,\n  }\n}');
    expect(c.reload()).toMatch(/invalid JSON at line 4, column 3/);
    expect(c.get().approvals.timeout_ms).toBe(5000);
    expect(c.error()).toBeDefined();
  });

  it('schema errors name the JSON pointer; duplicate rule ids are refused', () => {
    const path = fresh();
    writeFileSync(path, JSON.stringify({ approvals: { rules: [{ id: 'r', channel: 'tmux:*' }] } }));
    expect(new ConfigStore(path).error()).toContain('/approvals/rules/0 lacks the property "op" (required)');
    writeFileSync(
      path,
      JSON.stringify({
        approvals: {
          rules: [
            { id: 'r', channel: 'a', op: 'b' },
            { id: 'r', channel: 'c', op: 'd' },
          ],
        },
      }),
    );
    expect(new ConfigStore(path).error()).toContain('rule id "r" twice');
  });

  it('driver sections are validated by the schema the driver exports, and read live', () => {
    const path = fresh();
    const schemas = { tmux: { type: 'object', properties: { socket: { type: 'string' } }, additionalProperties: false } };
    writeFileSync(path, JSON.stringify({ tmux: { socket: 1 } }));
    expect(new ConfigStore(path, schemas).error()).toContain('/tmux/socket must be string');
    writeFileSync(path, JSON.stringify({ tmux: { socket: '/s' } }));
    const c = new ConfigStore(path, schemas);
    const section = c.section<{ socket: string }>('tmux');
    expect(section()?.socket).toBe('/s');
    writeFileSync(path, JSON.stringify({ tmux: { socket: '/t' } }));
    c.reload();
    expect(section()?.socket).toBe('/t');
  });

  it('update edits atomically, preserves other sections and leaves no temp file', () => {
    const path = fresh();
    writeFileSync(path, JSON.stringify({ desktop: { x: 1 }, approvals: { timeout_ms: 9000 } }));
    const c = new ConfigStore(path);
    c.update((raw) => {
      (raw.approvals as { rules?: unknown[] }).rules = [{ id: 'r1', channel: 'tmux:%1', op: 'send' }];
    });
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({
      desktop: { x: 1 },
      approvals: { timeout_ms: 9000, rules: [{ id: 'r1', channel: 'tmux:%1', op: 'send' }] },
    });
    expect(readdirSync(join(path, '..')).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(() => c.update((raw) => void (raw.approvals = { timeout_ms: 'x' }))).toThrow(/would be invalid/);
  });

  it('a listener that throws keeps no other from hearing of a change, and does not fail the edit', () => {
    const path = fresh();
    writeFileSync(path, JSON.stringify({ approvals: { timeout_ms: 2000 } }));
    const c = new ConfigStore(path);
    const heard: number[] = [];
    c.onChange(() => {
      throw new Error('a broken listener');
    });
    c.onChange((config) => heard.push(config.approvals.timeout_ms));
    expect(() => c.update((raw) => void (raw.approvals = { timeout_ms: 4000 }))).not.toThrow();
    writeFileSync(path, JSON.stringify({ approvals: { timeout_ms: 5000 } }));
    expect(c.reload()).toBeUndefined();
    expect(heard).toEqual([4000, 5000]);
  });

  it('watch reloads after the file changes', async () => {
    const path = fresh();
    writeFileSync(path, JSON.stringify({ approvals: { timeout_ms: 2000 } }));
    const c = new ConfigStore(path);
    const stop = c.watch(20);
    writeFileSync(path, JSON.stringify({ approvals: { timeout_ms: 3000 } }));
    const deadline = Date.now() + 5000;
    while (c.get().approvals.timeout_ms !== 3000 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    stop();
    expect(c.get().approvals.timeout_ms).toBe(3000);
  });
});

describe('jsonErrorLocation', () => {
  it('finds the first bad character', () => {
    expect(jsonErrorLocation('{"a": 1}')).toBeUndefined();
    expect(jsonErrorLocation('{"a": 1,}')).toBe('line 1, column 9');
    expect(jsonErrorLocation('[1, 2\n, oops]')).toBe('line 2, column 3');
    expect(jsonErrorLocation('{"a": 1} x')).toBe('line 1, column 10');
    expect(jsonErrorLocation('{"a": tru}')).toBe('line 1, column 7');
  });
});

describe('ConfigStore across restarts', () => {
  it('a file broken before a restart: the last good config of the earlier run stays in use, and says so', () => {
    const path = fresh();
    writeFileSync(path, JSON.stringify({ approvals: { rules: [{ id: 'keep', channel: 'tmux:*', op: 'send' }] }, tmux: { read_deny: ['secret*'] } }));
    const first = new ConfigStore(path);
    expect(first.fallback()).toBe('the last good config stays in use');
    writeFileSync(path, '{ "approvals": { "rules": [ }');
    const second = new ConfigStore(path);
    expect(second.error()).toMatch(/invalid JSON at line 1/);
    expect(second.get().approvals.rules.map((r) => r.id)).toEqual(['keep']);
    expect(second.get().tmux).toEqual({ read_deny: ['secret*'] });
    expect(second.fallback()).toBe(`the last good config (saved in ${join(path, '..', 'config.last-good.json')}) stays in use`);
    expect(statSync(second.lastGoodPath).mode & 0o777).toBe(0o600);
  });

  it('with no earlier good config the defaults are in use, and it says so', () => {
    const path = fresh();
    writeFileSync(path, '{ nope');
    const c = new ConfigStore(path);
    expect(c.get().approvals.rules).toEqual([]);
    expect(c.fallback()).toBe('the defaults are in use: no good config was loaded before');
  });

  it('deleting the file after a config loaded is a breakage: the last good config stays, here and after a restart', () => {
    const path = fresh();
    writeFileSync(path, JSON.stringify({ approvals: { rules: [{ id: 'old', channel: 'a', op: 'b' }] }, tmux: { read_deny: ['secret*'] } }));
    const c = new ConfigStore(path);
    rmSync(path);
    expect(c.reload()).toBe(`${path} is missing (it held a config that was loaded before)`);
    expect(c.get().tmux).toEqual({ read_deny: ['secret*'] });
    expect(existsSync(c.lastGoodPath)).toBe(true);
    const restarted = new ConfigStore(path);
    expect(restarted.error()).toMatch(/is missing/);
    expect(restarted.get().approvals.rules.map((r) => r.id)).toEqual(['old']);
    expect(restarted.get().tmux).toEqual({ read_deny: ['secret*'] });
  });

  it('an emptied file is broken, not the defaults, and the saved copy survives it', () => {
    const path = fresh();
    writeFileSync(path, JSON.stringify({ tmux: { read_deny: ['secret*'] } }));
    const c = new ConfigStore(path);
    for (const empty of ['', '  \n']) {
      writeFileSync(path, empty);
      expect(c.reload()).toBe(`${path} is empty`);
      expect(c.get().tmux).toEqual({ read_deny: ['secret*'] });
      expect(new ConfigStore(path).get().tmux).toEqual({ read_deny: ['secret*'] });
    }
  });

  it('writing {} is how the defaults come back, and a later deletion still keeps them', () => {
    const path = fresh();
    writeFileSync(path, JSON.stringify({ tmux: { read_deny: ['secret*'] } }));
    const c = new ConfigStore(path);
    writeFileSync(path, '{}');
    expect(c.reload()).toBeUndefined();
    expect(c.get().tmux).toBeUndefined();
    rmSync(path);
    expect(c.reload()).toMatch(/is missing/);
    expect(new ConfigStore(path).get().tmux).toBeUndefined();
  });

  it('a deeply nested file is refused before anything recursive parses it, and the last good config is used on restart', () => {
    const path = fresh();
    writeFileSync(path, JSON.stringify({ tmux: { read_deny: ['secret*'] } }));
    const c = new ConfigStore(path);
    writeFileSync(path, '['.repeat(100_000));
    expect(c.reload()).toBe(`${path} nests deeper than ${MAX_CONFIG_DEPTH} levels`);
    writeFileSync(path, `{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`);
    expect(c.reload()).toMatch(/nests deeper/);
    const restarted = new ConfigStore(path);
    expect(restarted.error()).toMatch(/nests deeper/);
    expect(restarted.get().tmux).toEqual({ read_deny: ['secret*'] });
  });

  it('brackets inside strings do not count as nesting', () => {
    expect(jsonDepth(JSON.stringify({ a: '[[[[{{{{\\"[[' }))).toBe(1);
    expect(jsonDepth('{"a":[{"b":[]}]}')).toBe(4);
  });

  it('an oversized file is refused without parsing it', () => {
    const path = fresh();
    writeFileSync(path, JSON.stringify({ tmux: { read_deny: ['secret*'] } }));
    const c = new ConfigStore(path);
    writeFileSync(path, JSON.stringify({ note: 'x'.repeat(MAX_CONFIG_BYTES) }));
    expect(c.reload()).toBe(`${path} is too large (over ${MAX_CONFIG_BYTES} bytes)`);
    expect(c.get().tmux).toEqual({ read_deny: ['secret*'] });
  });

  it('an unreadable file (a directory in its place) is broken', () => {
    const path = fresh();
    writeFileSync(path, JSON.stringify({ tmux: { read_deny: ['secret*'] } }));
    const c = new ConfigStore(path);
    rmSync(path);
    mkdirSync(path);
    expect(c.reload()).toMatch(/^cannot read .*config\.json: /);
    expect(c.get().tmux).toEqual({ read_deny: ['secret*'] });
  });

  it('a fresh data dir with no config ever written runs on the defaults', () => {
    const path = fresh();
    const c = new ConfigStore(path);
    expect(c.error()).toBeUndefined();
    expect(c.reload()).toBeUndefined();
    expect(existsSync(c.lastGoodPath)).toBe(false);
  });

  it('a user-created config.json readable by others is tightened to 0600 on load', () => {
    const path = fresh();
    writeFileSync(path, '{}', { mode: 0o644 });
    chmodSync(path, 0o644);
    new ConfigStore(path);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });
});
