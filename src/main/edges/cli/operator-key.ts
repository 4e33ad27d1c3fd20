/**
 * `<data dir>/operator.key`, as the CLI reads it to speak for the operator (`POST /cli`,
 * `POST /panel/code`): the hub rewrites it at every start, mode 0600. It is read only if it is a
 * small regular file readable by its owner alone: a FIFO or a device in its place must not hang
 * the CLI or feed it endless bytes, and a key others can read is no longer the operator's.
 */
import { statSync } from 'node:fs';
import { HubError, operatorKeyPath, readSmallFile } from '../../hub';

/** The key is one line of base64url; anything larger is not a key the hub wrote. */
const MAX_KEY_BYTES = 4096;

/**
 * The operator key of the hub running for `dataDir` (`pid`, for the message). Throws a one-line
 * `core:Unavailable` when it cannot be read, is not a small regular file, or others can read it.
 */
export function readOperatorKey(dataDir: string, pid: number): string {
  const path = operatorKeyPath(dataDir);
  const refuse = (why: string, hint: string): HubError =>
    new HubError('core', 'Unavailable', `a hub (pid ${pid}) runs for this data directory but its operator key ${path} ${why}`, { hint });
  let key: string;
  try {
    key = readSmallFile(path, MAX_KEY_BYTES).trim();
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'EFTYPE' || err.code === 'EFBIG') throw refuse(`is refused: ${err.message}`, 'restart the hub: it writes a fresh key at every start');
    throw refuse(
      `cannot be read (${err.code ?? 'unreadable'})`,
      'run uplink as the user that runs the hub; a hub of an older Uplink writes no key: restart it',
    );
  }
  if (process.platform !== 'win32') {
    const mode = statSync(path).mode & 0o777;
    if ((mode & 0o077) !== 0)
      throw refuse(`is readable by others (mode ${mode.toString(8)})`, `restart the hub (it writes the key 0600), or chmod 600 ${path}`);
  }
  if (!key) throw refuse('is empty', 'restart the hub: it writes a fresh key at every start');
  return key;
}
