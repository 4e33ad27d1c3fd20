/**
 * Named agent credentials on disk: only a token's hash is kept, the file is private and written
 * whole, names are checked, the count is bounded, and a broken file accepts no agent token.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { AgentCredentialStore, MAX_AGENTS } from '../../../src/main/hub/credentials/agents';
import { tmpDataDir } from '../../fixtures/hub-build';
import type { HubError } from '../../../src/main/hub';

const NOW = Date.UTC(2026, 0, 2);

/** The one line the operator sees for what `fn` throws. */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return (e as HubError).rendered;
  }
  throw new Error('expected a refusal');
}

describe('agent credentials', () => {
  it('a created agent authenticates with its token, which is never stored; the file is 0600', () => {
    const dir = tmpDataDir();
    const store = new AgentCredentialStore(dir);
    const { id, token } = store.create('claude-build', 'alice', NOW);
    expect(id).toBe('claude-build');
    expect(Buffer.from(token, 'base64url').length).toBeGreaterThanOrEqual(32);
    expect(store.authenticate(token)).toEqual({ id: 'claude-build' });
    expect(store.authenticate(`${token}x`)).toBeUndefined();
    expect(store.authenticate(undefined)).toBeUndefined();
    const text = readFileSync(store.path, 'utf8');
    expect(text).not.toContain(token);
    expect(statSync(store.path).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir).filter((f) => f.includes('.tmp'))).toEqual([]);
    expect(store.list()).toEqual([{ id: 'claude-build', created_at: new Date(NOW).toISOString(), created_by: 'alice' }]);
    // Another process (a running hub) sees it without restarting.
    expect(new AgentCredentialStore(dir).authenticate(token)).toEqual({ id: 'claude-build' });
  });

  it('a revoked agent is refused, stays listed, and its name can be issued again with a new token', () => {
    const dir = tmpDataDir();
    const store = new AgentCredentialStore(dir);
    const running = new AgentCredentialStore(dir);
    const first = store.create('bot', 'alice', NOW);
    expect(running.authenticate(first.token)).toEqual({ id: 'bot' });
    store.revoke('bot', NOW + 1000);
    expect(running.authenticate(first.token)).toBeUndefined();
    expect(store.list()[0]).toMatchObject({ id: 'bot', revoked_at: new Date(NOW + 1000).toISOString() });
    expect(() => store.revoke('bot', NOW)).toThrow(/already revoked/);
    expect(refusal(() => store.revoke('nobody', NOW))).toMatch(/no agent "nobody" — hint: list them with `uplink agents`/);
    const second = store.create('bot', 'alice', NOW + 2000);
    expect(running.authenticate(second.token)).toEqual({ id: 'bot' });
    expect(running.authenticate(first.token)).toBeUndefined();
    expect(refusal(() => store.create('bot', 'alice', NOW))).toMatch(/agent "bot" already exists — hint: revoke it first/);
  });

  it('names must be identifier-like and not one of the hub’s own callers', () => {
    const store = new AgentCredentialStore(tmpDataDir());
    for (const bad of ['', 'Claude', '1bot', 'a b', 'x'.repeat(65), '../etc', 'bot*']) {
      expect(refusal(() => store.create(bad, 'alice', NOW))).toMatch(/is not valid — hint: use 1 to 64 characters/);
    }
    for (const reserved of ['default', 'stdio', 'operator', 'uplink-cli', 'unauthenticated'])
      expect(() => store.create(reserved, 'alice', NOW)).toThrow(/reserved/);
  });

  it('a file naming an agent as one of the hub’s own callers (edited by hand) accepts no agent token', () => {
    const store = new AgentCredentialStore(tmpDataDir());
    const { token } = store.create('bot', 'alice', NOW);
    // The CLI's records are the operator's: an agent that could write as "uplink-cli" would read as the operator in the audit.
    writeFileSync(store.path, readFileSync(store.path, 'utf8').replace('"id": "bot"', '"id": "uplink-cli"'));
    expect(store.authenticate(token)).toBeUndefined();
    expect(store.error()).toMatch(/agents\.json: \/agents\/0\/id "uplink-cli" is reserved for Uplink's own callers/);
  });

  it(`keeps at most ${MAX_AGENTS} agents, making room only from revoked ones`, () => {
    const store = new AgentCredentialStore(tmpDataDir());
    for (let i = 0; i < MAX_AGENTS; i++) store.create(`a${i}`, 'alice', NOW);
    expect(refusal(() => store.create('one-more', 'alice', NOW))).toMatch(/already 256 agents — hint: revoke/);
    store.revoke('a7', NOW);
    store.create('one-more', 'alice', NOW);
    expect(store.list()).toHaveLength(MAX_AGENTS);
    expect(store.list().some((a) => a.id === 'a7')).toBe(false);
  });

  it('a corrupt file accepts no agent token and says where it broke; edits refuse to overwrite it', () => {
    const dir = tmpDataDir();
    const store = new AgentCredentialStore(dir);
    const { token } = store.create('bot', 'alice', NOW);
    const good = readFileSync(store.path, 'utf8');
    writeFileSync(store.path, good.replace('"token_sha256": "', '"token_sha256": "zz'));
    expect(store.authenticate(token)).toBeUndefined();
    expect(store.error()).toMatch(/agents\.json: \/agents\/0\/token_sha256 must be 64 hex digits/);
    expect(refusal(() => store.create('other', 'alice', NOW))).toMatch(/no agent token is accepted until it is fixed — hint: fix or remove/);
    writeFileSync(store.path, '{ not json');
    expect(store.authenticate(token)).toBeUndefined();
    expect(store.error()).toMatch(/cannot be read/);
    writeFileSync(store.path, good);
    expect(store.authenticate(token)).toEqual({ id: 'bot' });
    expect(store.error()).toBeUndefined();
  });
});
