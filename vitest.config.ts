import { defineConfig } from 'vitest/config';

// Two suites, one command: unit tests run in seconds; integration tests start real tmux
// servers, X clients and SQLite files. The browser end-to-end suite is Playwright's (test/e2e).
export default defineConfig({
  test: {
    projects: [
      {
        // Unit tests share nothing and mostly wait (jsdom, timers, short-lived child processes): three
        // workers on two cores, before the integration projects start. Those keep one worker (the
        // default here, cores − 1): they time real tmux servers, X clients and hubs.
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.{ts,tsx}'],
          environment: 'node',
          maxWorkers: 3,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          sequence: { groupOrder: 1 },
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        // The tmux integration suite again, with the tmux driver out of process behind the driver
        // protocol (test/fixtures/tmux-driver.ts): the proof that the protocol carries a real driver.
        // All of it but transport.test.ts, which drives tmux's control mode with no driver at all.
        // Measured alone on two shared cores: 85–100 s, against 65–85 s for the same files in process.
        test: {
          name: 'integration-tmux-via-protocol',
          include: ['test/integration/tmux/**/*.test.ts'],
          sequence: { groupOrder: 1 },
          exclude: ['test/integration/tmux/transport.test.ts'],
          env: { UPLINK_TEST_TMUX_VIA_PROTOCOL: '1' },
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
