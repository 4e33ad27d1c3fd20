/**
 * tmux driver cost against tmux's own cost, measured in the same run: `send` (typed, verified on
 * screen, then Enter) and `read`, each beside the same tmux commands (`send-keys -l`,
 * `capture-pane`, `send-keys Enter`; `capture-pane`) run two ways — as one-shot `tmux` processes
 * (the floor a script pays) and over ONE persistent control-mode client of the bench's own (tmux's
 * own cost: no process start), the control-mode send also once waiting, as verifying must, for
 * the typed text's echo before its capture. They are alternated call by call, so load drift on a
 * shared machine hits all alike. Target: ≤ 3× the one-shot round trip. Plus how many panes per
 * second `channels` lists with 200 panes. Runs on a private tmux server.
 */
import { execFile, spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { createTmuxDriver } from '../src/main/drivers/tmux';
import { ControlFramer, commandLine } from '../src/main/drivers/tmux/control-protocol';
import { TmuxTestServer } from '../test/fixtures/tmux-server';
import { median, percentile, type BenchReport } from './types';
import { validated } from '../test/fixtures/validated-driver';

const ROUNDS = 100;

function tmux(socket: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('tmux', ['-S', socket, ...args], { env: TmuxTestServer.cleanEnv(), encoding: 'utf8' }, (error, stdout) =>
      error ? reject(error) : resolve(stdout),
    );
  });
}

/**
 * A bare control-mode client: commands written as lines on its stdin, each reply read between
 * `%begin` and `%end` on its stdout, notifications (`%output` …) skipped.
 */
class ControlBaseline {
  #framer = new ControlFramer();
  #waiting: Array<(lines: string[]) => void> = [];
  #echoes: Array<{ pane: string; resolve: () => void }> = [];
  #partial = '';

  private constructor(readonly child: ChildProcessWithoutNullStreams) {}

  static attach(socket: string, session: string): Promise<ControlBaseline> {
    const child = spawn('tmux', ['-S', socket, '-C', 'attach-session', '-f', 'ignore-size', '-t', session], {
      env: TmuxTestServer.cleanEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const client = new ControlBaseline(child);
    return new Promise((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`tmux -C exited ${code}`)));
      // The attach's own block (flags 0) is the greeting; the framer drops it.
      const greeted = (chunk: Buffer): void => {
        if (!chunk.includes('%end ')) return;
        child.stdout.off('data', greeted);
        resolve(client);
      };
      child.stdout.on('data', greeted);
      child.stdout.on('data', (chunk: Buffer) => client.#onData(chunk));
    });
  }

  #onData(chunk: Buffer): void {
    const lines = (this.#partial + chunk.toString('latin1')).split('\n');
    this.#partial = lines.pop()!;
    for (const line of lines) {
      for (const event of this.#framer.feed(line)) {
        if (event.type === 'reply') this.#waiting.shift()?.(event.lines);
        else if (event.type === 'output' && this.#echoes.length > 0) {
          const waiting = this.#echoes;
          this.#echoes = waiting.filter((w) => w.pane !== event.pane);
          for (const w of waiting) if (w.pane === event.pane) w.resolve();
        }
      }
    }
  }

  /**
   * Runs a command typing into `pane` and resolves on the pane's first `%output` after its reply:
   * the echo (output printed before the reply is what the pane showed earlier).
   */
  runThenEcho(args: string[], pane: string): Promise<void> {
    return new Promise((resolve) => {
      this.#waiting.push(() => this.#echoes.push({ pane, resolve }));
      this.child.stdin.write(commandLine(args));
    });
  }

  run(args: string[]): Promise<string[]> {
    return new Promise((resolve) => {
      this.#waiting.push(resolve);
      this.child.stdin.write(commandLine(args));
    });
  }

  close(): void {
    this.child.stdin.end();
  }
}

/** Runs each of `fns` once per round, in an order rotated every round; returns ms samples per fn. */
async function alternate(rounds: number, fns: Array<(i: number) => Promise<unknown>>): Promise<number[][]> {
  const samples = fns.map(() => [] as number[]);
  for (let i = 0; i < rounds; i++) {
    for (let k = 0; k < fns.length; k++) {
      const which = (i + k) % fns.length;
      const t0 = performance.now();
      await fns[which]!(i);
      samples[which]!.push(performance.now() - t0);
    }
  }
  return samples;
}

/** Runs the tmux benchmark. */
export async function run(): Promise<BenchReport> {
  const server = TmuxTestServer.start('sh');
  const driver = validated(createTmuxDriver({ env: server.ownEnv() }));
  const control = await ControlBaseline.attach(server.socket, 'it');
  try {
    const peer = server.split('cat');
    server.setOption(peer, '@uplink_profile', 'operator');
    // The commands Uplink's verified send issues at the least, and its read.
    const sendCommands = (text: string): string[][] => [
      ['send-keys', '-t', peer, '-l', '--', text],
      ['capture-pane', '-p', '-J', '-t', peer],
      ['send-keys', '-t', peer, 'Enter'],
    ];
    const readCommand = ['capture-pane', '-p', '-J', '-t', peer, '-S', '-50'];
    const oneShotSend = async (i: number): Promise<void> => {
      for (const args of sendCommands(`one-shot message ${i}`)) await tmux(server.socket, args);
    };
    const controlSend = async (i: number): Promise<void> => {
      for (const args of sendCommands(`control message ${i}`)) await control.run(args);
    };
    // The same commands waiting, as a verified send must, for the typed text's echo before the
    // capture (a capture taken earlier cannot show it).
    const controlSendEcho = async (i: number): Promise<void> => {
      const [type, capture, enter] = sendCommands(`control echo message ${i}`);
      await control.runThenEcho(type!, peer);
      await control.run(capture!);
      await control.run(enter!);
    };
    const uplinkSend = (i: number): Promise<unknown> => driver.send(peer, { message: `bench message ${i}`, reply_hint: 'none' });
    const oneShotRead = (): Promise<unknown> => tmux(server.socket, readCommand);
    const controlRead = (): Promise<unknown> => control.run(readCommand);
    const uplinkRead = (): Promise<unknown> => driver.invoke(peer, 'read', { lines: 50 });

    // Warm up all paths (process cache, the driver's control-mode attach, the JIT).
    await alternate(10, [oneShotSend, controlSend, controlSendEcho, uplinkSend, oneShotRead, controlRead, uplinkRead]);
    const [rawSend, ctlSend, ctlSendEcho, send] = await alternate(ROUNDS, [oneShotSend, controlSend, controlSendEcho, uplinkSend]);
    const [rawRead, ctlRead, read] = await alternate(ROUNDS, [oneShotRead, controlRead, uplinkRead]);
    const m = (xs: number[]): number => median([...xs]);
    const p95 = (xs: number[]): number => percentile([...xs], 95);

    // 200 panes: one session, 199 extra windows (splits would run out of room).
    for (let i = 0; i < 198; i++) await tmux(server.socket, ['new-window', '-d', '-t', 'it', 'cat']);
    const listed = (await driver.channels()).length;
    const [list] = await alternate(30, [() => driver.channels()]);
    const listMedian = m(list!);

    return {
      title: 'tmux driver (private server, control mode)',
      rows: [
        { name: 'send (verified) median', value: m(send!), unit: 'ms', note: `p95 ${p95(send!).toFixed(2)} ms` },
        {
          name: 'one-shot send-keys, capture-pane, Enter median',
          value: m(rawSend!),
          unit: 'ms',
          note: `three tmux processes; p95 ${p95(rawSend!).toFixed(2)} ms`,
        },
        {
          name: 'control-mode send-keys, capture-pane, Enter median',
          value: m(ctlSend!),
          unit: 'ms',
          note: `one persistent tmux -C client; p95 ${p95(ctlSend!).toFixed(2)} ms`,
        },
        {
          name: 'control-mode send-keys, echo, capture-pane, Enter median',
          value: m(ctlSendEcho!),
          unit: 'ms',
          note: `the same, waiting for the echo as verifying must; p95 ${p95(ctlSendEcho!).toFixed(2)} ms`,
        },
        { name: 'send / one-shot (median)', value: m(send!) / m(rawSend!), unit: '×', note: 'target ≤ 3' },
        { name: 'send / control mode (median)', value: m(send!) / m(ctlSend!), unit: '×', note: 'no echo wait in the baseline' },
        { name: 'send / control mode with echo (median)', value: m(send!) / m(ctlSendEcho!), unit: '×', note: "over tmux's own cost" },
        { name: 'read (50 lines) median', value: m(read!), unit: 'ms', note: `p95 ${p95(read!).toFixed(2)} ms` },
        { name: 'one-shot capture-pane median', value: m(rawRead!), unit: 'ms', note: `p95 ${p95(rawRead!).toFixed(2)} ms` },
        { name: 'control-mode capture-pane median', value: m(ctlRead!), unit: 'ms', note: `p95 ${p95(ctlRead!).toFixed(2)} ms` },
        { name: 'read / one-shot (median)', value: m(read!) / m(rawRead!), unit: '×', note: 'target ≤ 3' },
        { name: 'read / control mode (median)', value: m(read!) / m(ctlRead!), unit: '×', note: "over tmux's own cost" },
        { name: `channels with ${listed} panes median`, value: listMedian, unit: 'ms' },
        { name: 'channels throughput', value: Math.round(listed / (listMedian / 1000)), unit: 'panes/s' },
      ],
    };
  } finally {
    control.close();
    await driver.dispose?.();
    server.stop();
  }
}
