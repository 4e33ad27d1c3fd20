/** What counts as this machine: for a listening host, and for a peer's address. A leaf module. */

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost']);
const LOOPBACK_PEERS = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/** Whether `host` (a `--host` value) listens on loopback only. */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_HOSTS.has(host);
}

/** Whether a connection's remote address is this machine. */
export function isLoopbackPeer(address: string | undefined): boolean {
  return LOOPBACK_PEERS.has(address ?? '');
}
