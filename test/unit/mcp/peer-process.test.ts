/**
 * Which process holds the other end of a loopback connection, from the kernel's tables: the hub's
 * only evidence of where a relayed caller runs. Real sockets, this process and a child.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { connectionOwner, peerSocketInode } from '../../../src/main/edges/http/peer-process';
import { prerequisite } from '../../fixtures/prerequisite';

const proc = prerequisite('/proc/net/tcp (Linux)', existsSync('/proc/net/tcp'), 'run the tests on Linux');
const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** A loopback server; resolves with each accepted socket in turn. */
async function listen(host: string): Promise<{ port: number; accepted: () => Promise<Socket> }> {
  const waiting: Array<(s: Socket) => void> = [];
  const queue: Socket[] = [];
  const server: Server = createServer((s) => {
    const w = waiting.shift();
    if (w) w(s);
    else queue.push(s);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  cleanup.push(() => new Promise((r) => server.close(r)));
  return {
    port: (server.address() as AddressInfo).port,
    accepted: () => new Promise((resolve) => (queue.length ? resolve(queue.shift()!) : waiting.push(resolve))),
  };
}

describe('connectionOwner', () => {
  it('finds this process behind a connection it opened, by a correct hint or by searching', async (ctx) => {
    proc.need(ctx);
    const { port, accepted } = await listen('127.0.0.1');
    const client = connect(port, '127.0.0.1');
    cleanup.push(() => client.destroy());
    const socket = await accepted();
    cleanup.push(() => socket.destroy());
    expect(await peerSocketInode(socket)).toMatch(/^\d+$/);
    expect(await connectionOwner(socket)).toBe(process.pid);
    expect(await connectionOwner(socket, process.pid)).toBe(process.pid);
  });

  it("a child's connection is the child's: a hint naming another process gets no answer", async (ctx) => {
    proc.need(ctx);
    const { port, accepted } = await listen('127.0.0.1');
    const child: ChildProcess = spawn(process.execPath, ['-e', `require('net').connect(${port}, '127.0.0.1'); setTimeout(() => {}, 60000)`], {
      stdio: 'ignore',
    });
    cleanup.push(() => child.kill('SIGKILL'));
    const socket = await accepted();
    cleanup.push(() => socket.destroy());
    expect(await connectionOwner(socket)).toBe(child.pid);
    expect(await connectionOwner(socket, child.pid)).toBe(child.pid);
    // A peer naming a pid that does not hold its connection proves nothing.
    expect(await connectionOwner(socket, process.pid)).toBeUndefined();
    expect(await connectionOwner(socket, 1)).toBeUndefined();
  });

  it('works over IPv6 loopback, and answers nothing for ends no local row has', async (ctx) => {
    proc.need(ctx);
    let server: { port: number; accepted: () => Promise<Socket> } | undefined;
    try {
      server = await listen('::1');
    } catch {
      // No IPv6 loopback here: the IPv4 cases above cover the technique.
    }
    if (server) {
      const client = connect(server.port, '::1');
      cleanup.push(() => client.destroy());
      const socket = await server.accepted();
      cleanup.push(() => socket.destroy());
      expect(await connectionOwner(socket)).toBe(process.pid);
    }
    expect(await connectionOwner({ remoteAddress: '127.0.0.1', remotePort: 1, localAddress: '127.0.0.1', localPort: 2 })).toBeUndefined();
    expect(await connectionOwner({})).toBeUndefined();
  });
});
