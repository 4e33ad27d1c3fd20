/**
 * Which local process is at the other end of a loopback TCP connection, established from the
 * kernel's own tables rather than taken from anything the peer says: the row of /proc/net/tcp (or
 * tcp6) whose local end is the peer's address and port and whose remote end is ours gives the
 * peer socket's inode, and the process holding it is the one whose /proc/<pid>/fd links to
 * `socket:[inode]`. Linux only; anywhere else, and whenever /proc cannot tell, there is no answer.
 *
 * What it proves: that process holds the connection, so it (or whoever controls it) sends what
 * arrives on it. It runs as a user who may read our /proc entries — the same user, in practice.
 */
import { readdir, readFile, readlink } from 'node:fs/promises';
import { endianness } from 'node:os';
import { isIP } from 'node:net';

/** The ends of an accepted connection, as `net.Socket` has them. */
export interface ConnectionEnds {
  remoteAddress?: string | undefined;
  remotePort?: number | undefined;
  localAddress?: string | undefined;
  localPort?: number | undefined;
}

/** Where /proc is (tests point it elsewhere). */
export interface ProcFs {
  root: string;
}

const LINUX: ProcFs = { root: '/proc' };

/** The 16 bytes of an IPv6 address (`::ffff:a.b.c.d` included); undefined for anything else. */
function ipv6Bytes(address: string): number[] | undefined {
  let text = address;
  let tail: number[] = [];
  const v4 = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    tail = v4[2]!.split('.').map(Number);
    text = `${v4[1]}0:0`;
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const groups = (s: string | undefined): string[] => (s ? s.split(':') : []);
  const left = groups(head);
  const right = groups(rest);
  const words = rest === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  if (words.length !== 8) return undefined;
  const bytes = words.flatMap((w) => {
    const n = parseInt(w, 16);
    return [(n >> 8) & 0xff, n & 0xff];
  });
  if (tail.length) bytes.splice(12, 4, ...tail);
  return bytes;
}

/**
 * An address as /proc/net/tcp{,6} prints it: each 32-bit word of the network-order address as
 * the host reads it, in hex. On a little-endian host 127.0.0.1 is `0100007F`.
 */
function procAddress(bytes: number[]): string {
  const little = endianness() === 'LE';
  let out = '';
  for (let i = 0; i < bytes.length; i += 4) {
    const word = bytes.slice(i, i + 4);
    if (little) word.reverse();
    out += word.map((b) => b.toString(16).padStart(2, '0')).join('');
  }
  return out.toUpperCase();
}

/** `<address>:<port>` as both /proc/net files could print one end (IPv4 in tcp, IPv6 or mapped in tcp6). */
function endForms(address: string, port: number): string[] {
  const p = port.toString(16).toUpperCase().padStart(4, '0');
  const forms: string[] = [];
  if (isIP(address) === 4) {
    const v4 = address.split('.').map(Number);
    forms.push(`${procAddress(v4)}:${p}`, `${procAddress([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...v4])}:${p}`);
  } else if (isIP(address) === 6) {
    const v6 = ipv6Bytes(address);
    if (v6) {
      forms.push(`${procAddress(v6)}:${p}`);
      if (v6.slice(0, 12).every((b, i) => b === (i >= 10 ? 0xff : 0))) forms.push(`${procAddress(v6.slice(12))}:${p}`);
    }
  }
  return forms;
}

/** The inode of the peer's socket of this connection, from the kernel's TCP tables. */
export async function peerSocketInode(ends: ConnectionEnds, proc: ProcFs = LINUX): Promise<string | undefined> {
  const { remoteAddress, remotePort, localAddress, localPort } = ends;
  if (!remoteAddress || !localAddress || !remotePort || !localPort) return undefined;
  const peer = new Set(endForms(remoteAddress, remotePort));
  const ours = new Set(endForms(localAddress, localPort));
  for (const file of ['net/tcp', 'net/tcp6']) {
    const text = await readFile(`${proc.root}/${file}`, 'latin1').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // sl local rem st queues timer retrnsmt uid timeout inode …
      if (f.length < 10 || !peer.has(f[1]!) || !ours.has(f[2]!)) continue;
      return f[9] !== '0' && /^\d+$/.test(f[9]!) ? f[9] : undefined;
    }
  }
  return undefined;
}

/** Whether process `pid` holds a descriptor of socket `inode`. */
async function holds(pid: number, inode: string, proc: ProcFs): Promise<boolean> {
  const dir = `${proc.root}/${pid}/fd`;
  const fds = await readdir(dir).catch(() => [] as string[]);
  const target = `socket:[${inode}]`;
  for (const fd of fds) if ((await readlink(`${dir}/${fd}`).catch(() => '')) === target) return true;
  return false;
}

/**
 * The one process holding the other end of this connection. `hint` (a pid the peer named) is
 * checked alone: it is the answer only if it holds the socket. Without a hint every process we
 * may inspect is searched, and the answer is the single holder (none when several hold it).
 */
export async function connectionOwner(ends: ConnectionEnds, hint?: number, proc: ProcFs = LINUX): Promise<number | undefined> {
  const inode = await peerSocketInode(ends, proc);
  if (inode === undefined) return undefined;
  if (hint !== undefined) return Number.isSafeInteger(hint) && hint > 1 && (await holds(hint, inode, proc)) ? hint : undefined;
  const pids = (await readdir(proc.root).catch(() => [] as string[])).filter((n) => /^\d+$/.test(n)).map(Number);
  const holders: number[] = [];
  // A few processes at a time: a scan is hundreds of small reads that must not hold up other requests.
  for (let i = 0; i < pids.length && holders.length < 2; i += 32) {
    const batch = pids.slice(i, i + 32);
    const found = await Promise.all(batch.map((pid) => holds(pid, inode, proc)));
    batch.forEach((pid, k) => found[k] && holders.push(pid));
  }
  return holders.length === 1 ? holders[0] : undefined;
}
