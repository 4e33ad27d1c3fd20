/** Shared set-up of the in-process hub tests: a hub over the fixture driver, closed after each test. */
import { createHub } from '../../../src/main/hub';
import type { Hub, HubError } from '../../../src/main/hub';
import { createTestDriver } from '../../fixtures/test-driver';
import { tmpDataDir } from '../../fixtures/hub-build';

const open: Hub[] = [];

type TestDriver = ReturnType<typeof createTestDriver>;

/** A hub over the fixture driver (a fresh one unless given) on `dir` (a new data dir unless given). */
export function openHub(options: { dir?: string; driver?: TestDriver; driverTimeoutMs?: number; progressIntervalMs?: number } = {}): { hub: Hub; driver: TestDriver; dir: string } {
  const { dir = tmpDataDir(), driver = createTestDriver(), ...hubOptions } = options;
  const hub = createHub({ dataDir: dir, drivers: [driver], progressIntervalMs: 50, ...hubOptions });
  open.push(hub);
  return { hub, driver, dir };
}

/** Closes every hub `openHub` made (call from afterEach). */
export async function closeHubs(): Promise<void> {
  await Promise.all(open.splice(0).map((h) => h.close()));
}

/** The HubError a promise rejects with; fails the test if it resolves. */
export async function failure(p: Promise<unknown>): Promise<HubError> {
  try {
    await p;
  } catch (e) {
    return e as HubError;
  }
  throw new Error('expected a failure');
}
