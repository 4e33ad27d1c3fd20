/** Shared setup for the tmux driver tests: one private server and one driver per test. */
import { afterEach } from 'vitest';
import type { Driver } from '../../../src/main/drivers/contract';
import { DriverError } from '../../../src/main/drivers/contract';
import type { TmuxConfig } from '../../../src/main/drivers/tmux';
import { tmuxDriverForTest } from '../../fixtures/tmux-driver';
import { TmuxTestServer } from '../../fixtures/tmux-server';
import { validated } from '../../fixtures/validated-driver';

/** A server, a driver on it (our own pane = the server's first pane), and a mutable config. */
export interface Rig {
  server: TmuxTestServer;
  driver: Driver;
  own: string;
  config: TmuxConfig;
}

const rigs: Rig[] = [];

/** Registers cleanup for every rig made in a test file. */
export function useRigs(): void {
  afterEach(async () => {
    for (const rig of rigs.splice(0)) {
      await rig.driver.dispose?.();
      rig.server.stop();
    }
  });
}

/** Starts a private server and a driver that believes it runs in the first pane. */
export function rig(options: { firstPane?: string; ownPane?: boolean; config?: TmuxConfig; now?: () => number; controlMode?: boolean } = {}): Rig {
  const server = TmuxTestServer.start(options.firstPane ?? 'sh');
  const r: Rig = { server, own: server.firstPane, config: options.config ?? {}, driver: undefined as unknown as Driver };
  r.driver = validated(
    tmuxDriverForTest({
      env: options.ownPane === false ? TmuxTestServer.cleanEnv() : server.ownEnv(),
      socket: options.ownPane === false ? server.socket : undefined,
      config: () => r.config,
      now: options.now,
      controlMode: options.controlMode,
    }),
  );
  rigs.push(r);
  return r;
}

/** Awaits a promise that must fail with a DriverError; returns it. */
export async function failure(promise: Promise<unknown>): Promise<DriverError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DriverError) return error;
    throw error;
  }
  throw new Error('expected a DriverError, but the call succeeded');
}
