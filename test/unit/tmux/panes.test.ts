/**
 * Pane lines as tmux prints them, and what the driver makes of lines it cannot read: tmux output
 * captured from a client without a UTF-8 locale (every byte outside printable ASCII, the 0x1f
 * separator included, printed as `_`) must make the driver unhealthy, not an empty server.
 */
import { describe, expect, it, vi } from 'vitest';
import { DriverError } from '../../../src/main/drivers/contract';
import { TmuxCore } from '../../../src/main/drivers/tmux/core';
import { doctor } from '../../../src/main/drivers/tmux/doctor';
import { PANE_FORMAT, PANE_MARKS_FORMAT, parseMarksLine, parsePaneList } from '../../../src/main/drivers/tmux/panes';

const US = '\u001f';

/** `tmux list-panes -a -F PANE_FORMAT` of a two-pane server, run by a UTF-8 client. */
const UTF8_OUTPUT = [
  ['%0', '3904', '$0', 'work', '0', '0', 'sh', '3905', '0', '0', '0', '12', '', '', '', '', '', '', 'vm'].join(US),
  ['%1', '3904', '$0', 'work', '0', '1', 'sh', '3908', '0', '0', '0', '11', '', '', '', '', '', 'builder', 'build · café | _ ; #'].join(US),
];

/** The same server listed by `env -i tmux list-panes …` (tmux 3.3a, C locale). */
const C_LOCALE_OUTPUT = ['%0_3904_$0_work_0_0_sh_3905_0_0_0_12_______vm', '%1_3904_$0_work_0_1_sh_3908_0_0_0_11______builder_build _ caf_'];

describe('pane lines', () => {
  it('the format asks for every field, separated by 0x1f', () => {
    expect(PANE_FORMAT.split(US)).toHaveLength(19);
    expect(PANE_FORMAT.startsWith(`#{pane_id}${US}`)).toBe(true);
  });

  it('parses titles with non-ASCII text and separator-like characters intact', () => {
    const panes = parsePaneList(UTF8_OUTPUT);
    expect(panes.map((p) => [p.id, p.target, p.label, p.title])).toEqual([
      ['%0', 'work:0.0', undefined, 'vm'],
      ['%1', 'work:0.1', 'builder', 'build · café | _ ; #'],
    ]);
  });

  it("a read's lookup asks for its marks only, and fails closed on a line of the wrong shape", () => {
    expect(PANE_MARKS_FORMAT.split(US)).toEqual(['#{pane_id}', '#{pid}', '#{@uplink_read}', '#{@name}', '#{@uplink_agent_label}', '#{@uplink_first_label}']);
    expect(parseMarksLine(['%3', '3904', 'off', 'vault', 'renamed', 'vault'].join(US))).toEqual({
      id: '%3',
      serverPid: '3904',
      readOff: true,
      label: 'vault',
      agentLabel: 'renamed',
      firstLabel: 'vault',
    });
    expect(parseMarksLine(['%3', '3904', '', '', '', ''].join(US))).toEqual({ id: '%3', serverPid: '3904', readOff: false });
    expect(parseMarksLine(['%3', '3904', '', 'a\u001fb', '', ''].join(US))).toMatchObject({ id: '%3', readOff: true, malformed: true });
    expect(parseMarksLine('%3_3904_____')).toBeUndefined();
  });

  it('no output is no panes', () => {
    expect(parsePaneList([])).toEqual([]);
  });

  it('lines printed of which none parses are an Upstream error that counts them, without their text', () => {
    let error: unknown;
    try {
      parsePaneList(C_LOCALE_OUTPUT);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DriverError);
    expect(error).toMatchObject({ kind: 'Upstream', message: 'none of the 2 pane lines tmux printed could be parsed (the pane format came back rewritten)' });
    expect((error as DriverError).hint).toMatch(/tmux -V/);
    expect(JSON.stringify((error as DriverError).toWire())).not.toContain('builder');
  });
});

/** A driver core whose tmux answers `list-panes`/`display-message` with `lines`. */
function coreAnswering(lines: string[]): TmuxCore {
  const core = new TmuxCore({ socket: '/nonexistent/uplink-test.sock', env: {}, controlMode: false });
  vi.spyOn(core.transport, 'run').mockImplementation((args) => {
    if (args[0] === 'list-panes') return Promise.resolve(lines);
    if (args[0] === 'display-message') return Promise.resolve(lines.filter((l) => l.startsWith(`${args[3]}`)));
    return Promise.resolve([]);
  });
  return core;
}

describe('resolving a pane by id', () => {
  it('an unreadable line is the same Upstream error, not "no pane %N"', async () => {
    await expect(coreAnswering(C_LOCALE_OUTPUT).pane('%1')).rejects.toMatchObject({
      kind: 'Upstream',
      message: 'the pane line tmux printed could not be parsed (the pane format came back rewritten)',
    });
    await expect(coreAnswering(UTF8_OUTPUT).pane('%1')).resolves.toMatchObject({ id: '%1', title: 'build · café | _ ; #' });
  });
});

describe('doctor', () => {
  it('is unhealthy, with one line and a hint, when the server lists panes none of which parses', async () => {
    const report = await doctor(coreAnswering(C_LOCALE_OUTPUT));
    expect(report.ok).toBe(false);
    const server = report.lines.filter((l) => l.startsWith('server:'));
    expect(server).toEqual([
      'server: reachable at /nonexistent/uplink-test.sock, but none of the 2 pane lines tmux printed could be parsed (the pane format came back rewritten) — hint: check that `tmux` on PATH is tmux itself and current (`tmux -V`): a wrapper or an old tmux can rewrite the output',
    ]);
  });

  it('is healthy when the same server lists its panes readably', async () => {
    const report = await doctor(coreAnswering(UTF8_OUTPUT));
    expect(report.lines).toContain('server: reachable at /nonexistent/uplink-test.sock (1 session, 2 panes)');
    expect(report.ok).toBe(true);
  });
});
