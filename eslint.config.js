// Lint: typescript-eslint's recommended rules, plus the import direction of docs/architecture.md enforced
// with `no-restricted-imports`, so that a wrong import fails CI instead of a review.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const NODE_IO = ['fs', 'fs/promises', 'child_process', 'net', 'http', 'https', 'dgram', 'tls', 'os', 'worker_threads', 'cluster'];
const nodeIo = NODE_IO.flatMap((m) => [m, `node:${m}`]);

/** A restriction on relative imports that reach into one of our layers. */
const layer = (name, why) => ({ regex: `(^|/)${name}(/|$)`, message: why });

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'release/**', 'test-results/**', 'playwright-report/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: { console: 'readonly', process: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', Buffer: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', structuredClone: 'readonly', performance: 'readonly', queueMicrotask: 'readonly', TextEncoder: 'readonly', TextDecoder: 'readonly', fetch: 'readonly', window: 'readonly', document: 'readonly', navigator: 'readonly', localStorage: 'readonly', WebSocket: 'readonly', globalThis: 'readonly', setImmediate: 'readonly', crypto: 'readonly' },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-imports': ['error', { paths: [{ name: 'electron', message: 'Only src/main/electron and src/preload may import electron (docs/architecture.md import direction).' }] }],
    },
  },
  {
    files: ['src/main/kernel/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [{ name: 'electron', message: 'The kernel is pure TypeScript: no electron.' }, ...nodeIo.map((name) => ({ name, message: 'The kernel does no I/O: take it through a small interface instead.' }))],
        patterns: [{ regex: '^\\.\\./', message: 'The kernel imports nothing of ours outside src/main/kernel.' }, { regex: '^node:', message: 'The kernel does no I/O.' }],
      }],
    },
  },
  {
    files: ['src/main/drivers/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [{ name: 'electron', message: 'Drivers never import electron.' }],
        patterns: [layer('hub', 'Drivers must not import the hub (hub → drivers, not back).'), layer('edges', 'Drivers must not import edges.'), layer('electron', 'Drivers must not import the Electron shell.'), layer('renderer', 'Drivers must not import the renderer.')],
      }],
    },
  },
  {
    files: ['src/main/hub/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [{ name: 'electron', message: 'The hub never imports electron.' }],
        patterns: [layer('edges', 'The hub must not import edges (edges → hub).'), layer('electron', 'The hub must not import the Electron shell.'), layer('renderer', 'The hub must not import the renderer.')],
      }],
    },
  },
  {
    files: ['src/main/edges/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [{ name: 'electron', message: 'Edges never import electron; only src/main/electron does.' }],
        patterns: [layer('electron', 'Edges must not import the Electron shell.'), layer('renderer', 'Edges must not import the renderer.')],
      }],
    },
  },
  {
    files: ['src/main/electron/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [layer('renderer', 'Main must not import the renderer.')] }] },
  },
  {
    files: ['src/shared/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [{ name: 'electron', message: 'src/shared imports nothing environment-specific.' }],
        patterns: [layer('main', 'src/shared imports nothing from the app.'), layer('renderer', 'src/shared imports nothing from the app.'), layer('preload', 'src/shared imports nothing from the app.'), { regex: '^node:', message: 'src/shared imports nothing environment-specific.' }],
      }],
    },
  },
  {
    // The panel never takes keyboard focus from a window an agent may be typing into: nothing in the
    // shell raises or focuses a window. A window shows itself (which focuses it) only when it first
    // appears or when the operator launches the app again; each such call says why it is allowed.
    files: ['src/main/electron/**/*.ts', 'src/preload/**/*.ts'],
    rules: {
      'no-restricted-syntax': ['error', {
        selector: 'CallExpression[callee.property.name=/^(focus|moveTop|focusOnWebView|setAlwaysOnTop|requestFocus|show)$/]',
        message: 'The panel must not take keyboard focus on its own: reach the operator with a notification or the flashing task-bar entry (attention.ts).',
      }],
    },
  },
  {
    files: ['src/preload/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [layer('main', 'The preload imports only electron and src/shared.'), layer('renderer', 'The preload imports only electron and src/shared.')] }],
    },
  },
  {
    files: ['src/renderer/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [{ name: 'electron', message: 'The renderer talks only to PanelApi.' }],
        patterns: [layer('main', 'The renderer imports only src/shared.'), layer('preload', 'The renderer imports only src/shared.'), { regex: '^node:', message: 'The renderer runs in a browser: no Node modules.' }],
      }],
      'no-restricted-syntax': ['error', {
        selector: "CallExpression[callee.object.name='window'][callee.property.name='focus']",
        message: 'The panel must not raise its own window: the operator may be watching an agent type elsewhere.',
      }],
    },
  },
  {
    files: ['test/**/*.{ts,tsx}', 'bench/**/*.ts', 'scripts/**/*.{js,mjs}', 'bin/**', '*.config.{js,ts,mjs}'],
    rules: { 'no-restricted-imports': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
