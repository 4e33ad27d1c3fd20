/**
 * The control client's reading of tmux's stdout, against a stand-in `tmux` that writes its
 * replies in pieces: lines and UTF-8 characters cut between chunks must come back whole.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ControlClient } from '../../../src/main/drivers/tmux/control-client';
import { tmuxFailure } from '../../../src/main/drivers/tmux/transport';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fake `tmux -C` answering every command line with `pieces`, written one by one. */
function fakeTmux(pieces: Buffer[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'uplink-fake-tmux-'));
  dirs.push(dir);
  const path = join(dir, 'tmux');
  const script = `#!${process.execPath}
const pieces = ${JSON.stringify(pieces.map((p) => p.toString('base64')))}.map((p) => Buffer.from(p, 'base64'));
process.stdout.write('%begin 1 1 0\\n%end 1 1 0\\n');
let sent = false;
process.stdin.on('data', async () => {
  if (sent) return;
  sent = true;
  for (const piece of pieces) {
    process.stdout.write(piece);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
});
process.stdin.on('end', () => process.exit(0));
`;
  writeFileSync(path, script);
  chmodSync(path, 0o755);
  return path;
}

describe('tmux control client', () => {
  it('joins a reply cut between chunks, inside a line and inside a UTF-8 character', async () => {
    const reply = Buffer.from('%begin 1 2 1\r\nfirst ❯ line\r\nsécond\n%end 1 2 1\n', 'utf8');
    const cut = reply.indexOf(Buffer.from('❯', 'utf8')) + 1;
    const pieces = [reply.subarray(0, 5), reply.subarray(5, cut), reply.subarray(cut, cut + 9), reply.subarray(cut + 9)];
    const client = await ControlClient.attach({
      tmux: fakeTmux(pieces),
      globalArgs: [],
      session: 'it',
      env: process.env,
      failure: (text) => tmuxFailure(text, undefined),
    });
    try {
      expect(await client.run(['display-message', '-p', 'x'])).toEqual(['first ❯ line', 'sécond']);
    } finally {
      await client.close();
    }
  });

  it('fails a command tmux does not answer within the timeout counted from its own start, and closes the client', async () => {
    const client = await ControlClient.attach({
      tmux: fakeTmux([Buffer.from('%begin 1 2 1\nok\n%end 1 2 1\n')]),
      globalArgs: [],
      session: 'it',
      env: process.env,
      commandTimeoutMs: 300,
      failure: (text) => tmuxFailure(text, undefined),
    });
    try {
      // The first is answered; the second, sent 200 ms later, never is.
      expect(await client.run(['display-message', '-p', 'x'])).toEqual(['ok']);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const sent = Date.now();
      const unanswered = client.run(['display-message', '-p', 'y']);
      const behind = client.run(['display-message', '-p', 'z']);
      await expect(unanswered).rejects.toMatchObject({ kind: 'Timeout', message: 'tmux did not answer "display-message" within 300 ms' });
      expect(Date.now() - sent).toBeGreaterThanOrEqual(290);
      await expect(behind).rejects.toMatchObject({ kind: 'Unavailable' });
      expect(client.alive).toBe(false);
    } finally {
      await client.close();
    }
  });
});
