import { defineConfig } from '@playwright/test';

// Browser e2e of the panel against a real `uplink serve` and a real tmux server, in Debian's
// Chromium (no Playwright browser download). Run: `npm run build && npx playwright test`.
export default defineConfig({
  testDir: './test/e2e',
  testMatch: '**/*.spec.ts',
  fullyParallel: false,
  workers: 1,
  timeout: 120_000,
  expect: { timeout: 15_000 },
  retries: 0,
  reporter: [['list']],
  outputDir: 'test-results',
  use: {
    headless: true,
    viewport: { width: 1360, height: 860 },
    colorScheme: 'dark',
    launchOptions: {
      executablePath: process.env.UPLINK_CHROMIUM ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    },
    trace: 'retain-on-failure',
  },
});
