import { defineConfig } from 'vitest/config';

// Third-party MCP clients against a real `uplink serve`: the official conformance suite, the MCP
// Inspector CLI and the Python SDK. Kept out of the root config's projects because they need
// test/interop's own node_modules (Node 22 tools), which `npm run test:interop` installs first.
export default defineConfig({
  test: {
    name: 'interop',
    root: new URL('../..', import.meta.url).pathname,
    include: ['test/interop/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
