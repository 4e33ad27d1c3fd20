/**
 * SQLite's `quick_check` of the audit file, on a thread of its own. It reads every page of the
 * file: a few hundred milliseconds for a few hundred MB with the pages cached, more from disk,
 * and `channel_doctor`, which any agent may call, asks for it (at most every 10 s). On the event
 * loop every call in flight would wait that long. A one-off worker opens the file read-only with
 * a connection of its own (the store's page cache would answer from what it read before the file
 * was overwritten), runs the check and ends.
 */
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { QUICK_CHECK, quickCheckLines } from './verify';
import { driverPath } from './wal-thread';

/** What the check printed, one line a row; or why it could not run. */
export type QuickCheckResult = { lines: string[] } | { error: string };

const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
let db;
try {
  db = new Database(workerData.path, { readonly: true, fileMustExist: true });
  const lines = db.pragma(workerData.check).map((r) => String(Object.values(r)[0]));
  parentPort.postMessage({ lines });
} catch (e) {
  parentPort.postMessage({ error: String((e && e.message) || e) });
} finally {
  try { if (db) db.close(); } catch {}
}
`;

/** Longest a check may take before doctor reports it unfinished (the thread is then ended). */
const CHECK_TIMEOUT_MS = 120_000;

/**
 * Runs the check of the file at `path` on a worker; here, on the caller's thread, when no worker
 * can start. A check still running after `timeoutMs` is ended and reported as such.
 */
export function quickCheckOffThread(path: string, timeoutMs = CHECK_TIMEOUT_MS): Promise<QuickCheckResult> {
  let worker: Worker;
  try {
    worker = new Worker(SOURCE, { eval: true, workerData: { path, driver: driverPath(), check: QUICK_CHECK } });
  } catch {
    return Promise.resolve(quickCheckHere(path));
  }
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      resolve({ error: `the check did not finish within ${Math.round(timeoutMs / 1000)} s` });
      void worker.terminate();
    }, timeoutMs);
    timer.unref();
    const done = (result: QuickCheckResult): void => {
      clearTimeout(timer);
      resolve(result);
    };
    worker.once('message', done);
    worker.once('error', (e) => done({ error: e.message }));
    worker.once('exit', (code) => done({ error: `the check's thread ended (exit code ${code}) before it answered` }));
  });
}

function quickCheckHere(path: string): QuickCheckResult {
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    return { lines: quickCheckLines(db) };
  } catch (e) {
    return { error: String((e as Error)?.message ?? e) };
  } finally {
    db?.close();
  }
}
