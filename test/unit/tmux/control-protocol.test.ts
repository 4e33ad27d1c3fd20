import { describe, expect, it } from 'vitest';
import { commandLine, ControlFramer, formatLiteral, quoteArg, sequenceLine, unescapeOutput } from '../../../src/main/drivers/tmux/control-protocol';
import { parsePaneLine, PANE_FORMAT } from '../../../src/main/drivers/tmux/panes';

describe('tmux control-mode protocol', () => {
  it('drops the greeting block and matches our replies, keeping %-prefixed body lines', () => {
    const f = new ControlFramer();
    expect(f.feed('%begin 1 269 0')).toEqual([]);
    expect(f.feed('%end 1 269 0')).toEqual([]);
    expect(f.feed('%session-changed $0 a')).toEqual([]);
    f.feed('%begin 1 270 1');
    f.feed('%3|main:0.1');
    f.feed('%end 1 999 1');
    expect(f.feed('%end 1 270 1')).toEqual([{ type: 'reply', ok: true, lines: ['%3|main:0.1', '%end 1 999 1'] }]);
    f.feed('%begin 1 271 1');
    f.feed("can't find pane: %9");
    expect(f.feed('%error 1 271 1')).toEqual([{ type: 'reply', ok: false, lines: ["can't find pane: %9"] }]);
  });

  it('decodes %output octal escapes into bytes', () => {
    const [event] = new ControlFramer().feed('%output %3 hello\\040world\\134x\\015\\012');
    expect(event).toMatchObject({ type: 'output', pane: '%3' });
    expect((event as { data: Buffer }).data.toString('latin1')).toBe('hello world\\x\r\n');
    expect(unescapeOutput(Buffer.from('❯', 'utf8').toString('latin1')).toString('utf8')).toBe('❯');
  });

  it('reports %exit and %pause', () => {
    const f = new ControlFramer();
    expect(f.feed('%exit')).toEqual([{ type: 'exit', reason: '' }]);
    expect(f.feed('%pause %4')).toEqual([{ type: 'pause', pane: '%4' }]);
  });

  it('quotes arguments for the tmux parser and refuses newlines', () => {
    expect(quoteArg("it's")).toBe("'it'\\''s'");
    expect(commandLine(['send-keys', '-t', '%1', '-l', '--', '$HOME; #x'])).toBe("'send-keys' '-t' '%1' '-l' '--' '$HOME; #x'\n");
    expect(() => quoteArg('a\nb')).toThrow(/newline/);
  });

  it('joins a command sequence with an unquoted ; and escapes format literals', () => {
    expect(
      sequenceLine([
        ['display-message', '-p', 'a;b'],
        ['capture-pane', '-p'],
      ]),
    ).toBe("'display-message' '-p' 'a;b' ; 'capture-pane' '-p'\n");
    expect(formatLiteral('#(touch x)#{a},b}#S')).toBe('##(touch x)##{a#}#,b#}##S');
    expect(formatLiteral('plain: text {x}')).toBe('plain: text {x#}');
  });

  it('parses pane lines and fails closed on a malformed one', () => {
    const fields = ['%3', '4242', '$0', 'main', '0', '1', 'node', '123', '0', '0', '10', '40', 'operator', '', '', '', '1700000000000', 'codex', 'title'];
    expect(PANE_FORMAT.split('\u001f')).toHaveLength(fields.length);
    expect(parsePaneLine(fields.join('\u001f'))).toMatchObject({
      id: '%3',
      serverPid: '4242',
      target: 'main:0.1',
      command: 'node',
      pid: 123,
      label: 'codex',
      profile: 'operator',
      readOff: false,
      lastRead: 1700000000000,
    });
    const broken = [...fields.slice(0, 17), 'co\u001fdex', 'title'].join('\u001f');
    expect(parsePaneLine(broken)).toMatchObject({ id: '%3', malformed: true, readOff: true });
    expect(parsePaneLine('not a pane')).toBeUndefined();
  });
});
