import { describe, expect, it } from 'vitest';
import { formatEnvelope, newCorrelationId, parseInbound, senderName } from '../../../src/main/drivers/tmux/envelope';

describe('tmux envelopes', () => {
  it('formats the three reply hints exactly', () => {
    expect(formatEnvelope('claude', '%5', 'ab12cd34', 'hello', 'none')).toBe('[uplink from:claude pane:%5 id:ab12cd34] hello');
    expect(formatEnvelope('claude', '%5', 'ab12cd34', 'hello', 'short')).toBe('[uplink from:claude pane:%5 id:ab12cd34] hello (reply-to:%5 id:ab12cd34)');
    expect(formatEnvelope('claude', '%5', 'ab12cd34', 'hello', 'full')).toBe(
      "[uplink from:claude pane:%5 id:ab12cd34] hello (reply: run `tmux send-keys -t %5 '[reply id:ab12cd34] <answer>' Enter`)",
    );
  });

  it('says pane:none and degrades the full hint when our pane is unknown', () => {
    expect(formatEnvelope('uplink', undefined, 'ab12cd34', 'hi', 'full')).toBe('[uplink from:uplink pane:none id:ab12cd34] hi (reply-to:none id:ab12cd34)');
  });

  it('correlation ids are 8 hex digits', () => {
    for (let i = 0; i < 50; i++) expect(newCorrelationId()).toMatch(/^[0-9a-f]{8}$/);
  });

  it('sender names are one word, default uplink', () => {
    expect(senderName(undefined)).toBe('uplink');
    expect(senderName('  ')).toBe('uplink');
    expect(senderName('Claude Code [beta]')).toBe('Claude-Code-beta-');
  });

  it('parses replies and uplink envelopes behind prompt decoration', () => {
    for (const prefix of ['', '❯ ', '› ', '> ', '$ ', '# ', '% ', '| ', '│ ', '┃ ', '▌ ', '⏺ ', '⎿  ', '● ', '• ', '* ', '  │ ❯ ']) {
      expect(parseInbound(`${prefix}[reply id:deadbeef] forty-two`)).toEqual({ kind: 'reply', id: 'deadbeef', body: 'forty-two' });
    }
    expect(parseInbound('$ [uplink from:codex pane:%2 id:ffffffff] hi there')).toEqual({ kind: 'uplink', from: 'codex', id: 'ffffffff', body: 'hi there' });
  });

  it('is anchored: an echo of our reply recipe is not a reply', () => {
    expect(parseInbound("tmux send-keys -t %0 '[reply id:6b3b20e6] 391' Enter")).toBeUndefined();
    expect(parseInbound("(reply: run `tmux send-keys -t %0 '[reply id:6b3b20e6] <answer>' Enter`)")).toBeUndefined();
    // A wrapped recipe whose continuation starts with the reply shape is still the placeholder.
    expect(parseInbound("│ [reply id:6b3b20e6] <answer>' Enter`)")).toBeUndefined();
    expect(parseInbound('plain output [reply id:6b3b20e6] x')).toBeUndefined();
    expect(parseInbound('[reply id:nothex!!] x')).toBeUndefined();
  });
});
