/**
 * Agents can send strings with lone surrogates (valid JSON, not encodable as UTF-8): every string
 * the audit stores — channel, op, agent, messages, args values and keys — is valid UTF-8, with
 * U+FFFD in their place, in the real SQLite file.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { closeHubs, failure, openHub } from './helpers';

afterEach(closeHubs);

const strict = new TextDecoder('utf-8', { fatal: true });

describe('audit text is valid UTF-8', () => {
  it('lone surrogates in channel, op, agent, message and args are stored as U+FFFD', async () => {
    const { hub, dir } = openHub();
    const agent = { kind: 'mcp' as const, name: 'agent\udc00', version: '1\ud800' };
    await failure(hub.invoke('tmux:\ud800', 'read\udfff', { text: 'a\ud800b', ['k\udc00']: ['\ud83d'] }, { agent }));
    await failure(hub.invoke('test:alpha', 'echo', { text: 'x\ud800', extra: '\udc00' }, { agent }));
    hub.queryAudit({ limit: 1 });
    const db = new Database(join(dir, 'audit.sqlite'), { readonly: true });
    try {
      const rows = db
        .prepare(
          'SELECT CAST(channel AS BLOB) AS channel, CAST(op AS BLOB) AS op, CAST(agent_name AS BLOB) AS agent, CAST(agent_version AS BLOB) AS version, CAST(message AS BLOB) AS message, CAST(args AS BLOB) AS args FROM entries',
        )
        .all() as Array<Record<string, Buffer | null>>;
      expect(rows.length).toBeGreaterThanOrEqual(2);
      const text = rows
        .map((r) =>
          Object.values(r)
            .filter((b): b is Buffer => b !== null)
            .map((b) => strict.decode(b))
            .join(' '),
        )
        .join('\n');
      expect(text).toContain('tmux:\ufffd');
      expect(text).toContain('read\ufffd');
      expect(text).toContain('agent\ufffd');
      expect(text).toContain('"k\ufffd":["\ufffd"]');
      expect(text).toContain('"text":"a\ufffdb"');
      expect(text).not.toMatch(/\\ud[89a-f]/);
    } finally {
      db.close();
    }
  });
});
