/**
 * tmux driver cost against the raw tmux round trip measured in the same run: `send` (typed,
 * verified on screen, then Enter) and `read`, beside `tmux send-keys` + `tmux capture-pane` as
 * two one-shot processes — the floor a script pays. Target: ≤ 3× the raw round trip. Plus how
 * many panes per second `channels` lists with 200 panes. Runs on a private tmux server.
 */
import { execFile } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { createTmuxDriver } from '../src/main/drivers/tmux';
import { TmuxTestServer } from '../test/fixtures/tmux-server';
import { median, percentile, type BenchReport } from './types';
import { validated } from '../test/fixtures/validated-driver';

const ROUNDS = 100;

function tmux(socket: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('tmux', ['-S', socket, ...args], { env: TmuxTestServer.cleanEnv(), encoding: 'utf8' }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
  });
}

async function time(rounds: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    await fn(i);
    samples.push(performance.now() - t0);
  }
  return samples;
}

/** Runs the tmux benchmark. */
export async function run(): Promise<BenchReport> {
  const server = TmuxTestServer.start('sh');
  const driver = validated(createTmuxDriver({ env: server.ownEnv() }));
  try {
    const peer = server.split('cat');
    server.setOption(peer, '@uplink_profile', 'operator');
    // Warm up both paths (process cache, control-mode attach).
    for (let i = 0; i < 10; i++) {
      await tmux(server.socket, ['send-keys', '-t', peer, '-l', `warm ${i}`]);
      await tmux(server.socket, ['capture-pane', '-p', '-t', peer]);
      await driver.send(peer, { message: `warm ${i}`, reply_hint: 'none' });
      await driver.invoke(peer, 'read', { lines: 50 });
    }
    await tmux(server.socket, ['send-keys', '-t', peer, 'Enter']);

    const raw = await time(ROUNDS, async (i) => {
      await tmux(server.socket, ['send-keys', '-t', peer, '-l', `raw message ${i}`]);
      await tmux(server.socket, ['capture-pane', '-p', '-t', peer]);
    });
    await tmux(server.socket, ['send-keys', '-t', peer, 'Enter']);
    const send = await time(ROUNDS, (i) => driver.send(peer, { message: `bench message ${i}`, reply_hint: 'none' }));
    const read = await time(ROUNDS, () => driver.invoke(peer, 'read', { lines: 50 }));

    const rawMedian = median([...raw]);
    const sendMedian = median([...send]);
    const readMedian = median([...read]);

    // 200 panes: one session, 199 extra windows (splits would run out of room).
    for (let i = 0; i < 198; i++) await tmux(server.socket, ['new-window', '-d', '-t', 'it', 'cat']);
    const listed = (await driver.channels()).length;
    const list = await time(30, () => driver.channels());
    const listMedian = median([...list]);

    return {
      title: 'tmux driver (private server, control mode)',
      rows: [
        { name: 'raw send-keys + capture-pane median', value: rawMedian, unit: 'ms', note: 'two one-shot tmux processes' },
        { name: 'raw send-keys + capture-pane p95', value: percentile([...raw], 95), unit: 'ms' },
        { name: 'send (verified) median', value: sendMedian, unit: 'ms' },
        { name: 'send (verified) p95', value: percentile([...send], 95), unit: 'ms' },
        { name: 'send / raw (median)', value: sendMedian / rawMedian, unit: '×', note: 'target ≤ 3' },
        { name: 'read median', value: readMedian, unit: 'ms' },
        { name: 'read p95', value: percentile([...read], 95), unit: 'ms' },
        { name: 'read / raw (median)', value: readMedian / rawMedian, unit: '×', note: 'target ≤ 3' },
        { name: `channels with ${listed} panes median`, value: listMedian, unit: 'ms' },
        { name: 'channels throughput', value: Math.round(listed / (listMedian / 1000)), unit: 'panes/s' },
      ],
    };
  } finally {
    await driver.dispose?.();
    server.stop();
  }
}
