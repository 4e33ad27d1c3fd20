// Lint: typescript-eslint's recommended rules, plus the import direction of docs/architecture.md enforced
// with `no-restricted-imports`, so that a wrong import fails CI instead of a review.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const NODE_IO = ['fs', 'fs/promises', 'child_process', 'net', 'http', 'https', 'dgram', 'tls', 'os', 'worker_threads', 'cluster'];
const nodeIo = NODE_IO.flatMap((m) => [m, `node:${m}`]);

/** The hub's services, one folder each, and the files every service may import. */
const HUB_SERVICES = ['approvals', 'audit', 'channels', 'config', 'credentials', 'driver-admin', 'fleet'];
const HUB_FOUNDATION = ['types', 'errors', 'bounds', 'hub', 'call-context', 'data-dir', 'files'];

/** A restriction on relative imports that reach into one of our layers. */
const layer = (name, why) => ({ regex: `(^|/)${name}(/|$)`, message: why });
/**
 * Every relative import that leaves a folder (`../…`, after `up` extra levels) except the listed
 * targets is refused, so a folder reaches another only through what the table allows: its index
 * file, or a file of `src/shared`.
 */
const onlyOutside = (up, allowed, why) => ({ regex: `^${'\\.\\./'.repeat(up + 1)}(?!(?:${allowed.join('|')}))`, message: why });

export default tseslint.config(
  { ignores: ['node_modules/**', 'test/interop/.venv/**', 'dist/**', 'release/**', 'test-results/**', 'playwright-report/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: {
        console: 'readonly',
        process: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        Buffer: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        structuredClone: 'readonly',
        performance: 'readonly',
        queueMicrotask: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        fetch: 'readonly',
        window: 'readonly',
        document: 'readonly',
        navigator: 'readonly',
        localStorage: 'readonly',
        WebSocket: 'readonly',
        globalThis: 'readonly',
        setImmediate: 'readonly',
        crypto: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-imports': [
        'error',
        { paths: [{ name: 'electron', message: 'Only src/main/electron and src/preload may import electron (docs/architecture.md import direction).' }] },
      ],
    },
  },
  {
    files: ['src/main/kernel/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'electron', message: 'The kernel is pure TypeScript: no electron.' },
            ...nodeIo.map((name) => ({ name, message: 'The kernel does no I/O: take it through a small interface instead.' })),
          ],
          patterns: [
            { regex: '^\\.\\./', message: 'The kernel imports nothing of ours outside src/main/kernel.' },
            { regex: '^node:', message: 'The kernel does no I/O.' },
          ],
        },
      ],
    },
  },
  {
    // Drivers see the kernel's types only (never its runtime), through its index.
    files: ['src/main/drivers/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)kernel$',
              allowTypeImports: true,
              message: 'Drivers take only types from the kernel: use `import type` — hint: the hub runs the kernel, a driver never does.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/main/drivers/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'Drivers never import electron.' }],
          patterns: [
            onlyOutside(
              0,
              ['kernel$', '\\.\\./shared/'],
              'The drivers import only the kernel (its index, types only) and src/shared — hint: the hub imports drivers, never the other way.',
            ),
          ],
        },
      ],
    },
  },
  {
    files: ['src/main/drivers/*/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'Drivers never import electron.' }],
          patterns: [
            onlyOutside(
              0,
              ['contract$', 'protocol-schemas$', 'glob$', 'files$', '\\.\\./kernel$', '\\.\\./\\.\\./shared/'],
              'A driver imports only the driver contract (../contract) and its schemas (../protocol-schemas), the shared glob (../glob) and atomic write (../files), the kernel (../../kernel, types only) and src/shared — hint: not another driver, the hub or an edge.',
            ),
          ],
        },
      ],
    },
  },
  {
    // The hub's own files: the composition (hub-core, hub, types, errors, bounds, …) and the public
    // index. They reach a service only through its index; the public index may name a light leaf
    // file of a service, since importing it must load no SQLite, validator or driver.
    files: ['src/main/hub/*.ts'],
    ignores: ['src/main/hub/index.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'The hub never imports electron.' }],
          patterns: [
            onlyOutside(
              0,
              ['kernel$', 'drivers$', '\\.\\./shared/'],
              "The hub imports the kernel and the drivers only through their index (../kernel, ../drivers), and src/shared — hint: export what you need from that folder's index.ts.",
            ),
            {
              regex: `^\\./(${HUB_SERVICES.join('|')})/`,
              message: "Reach a hub service through its index (./approvals, ./audit, …) — hint: export what you need from the service's index.ts.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/main/hub/*/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'The hub never imports electron.' }],
          patterns: [
            onlyOutside(
              0,
              [`(?:${[...HUB_SERVICES, ...HUB_FOUNDATION].join('|')})$`, '\\.\\./kernel$', '\\.\\./drivers$', '\\.\\./\\.\\./shared/'],
              "A hub service imports another service only through its index (../audit, ../config, …), the hub's foundation files (../types, ../errors, ../bounds, …), the kernel and the drivers through their index (../../kernel, ../../drivers), and src/shared.",
            ),
          ],
        },
      ],
    },
  },
  {
    files: ['src/main/edges/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'Edges never import electron; only src/main/electron does.' }],
          patterns: [
            onlyOutside(
              1,
              ['hub$', '\\.\\./shared/'],
              'Edges import only the hub through its index (../../hub) and src/shared — hint: re-export what an edge needs from src/main/hub/index.ts.',
            ),
          ],
        },
      ],
    },
  },
  {
    files: ['src/main/electron/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            layer('renderer', 'Main must not import the renderer.'),
            { regex: '^\\.\\./(hub|kernel|drivers)/', message: 'Import the hub, kernel and drivers through their index (../hub, ../kernel, ../drivers).' },
          ],
        },
      ],
    },
  },
  {
    files: ['src/shared/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'src/shared imports nothing environment-specific.' }],
          patterns: [
            layer('main', 'src/shared imports nothing from the app.'),
            layer('renderer', 'src/shared imports nothing from the app.'),
            layer('preload', 'src/shared imports nothing from the app.'),
            { regex: '^node:', message: 'src/shared imports nothing environment-specific.' },
          ],
        },
      ],
    },
  },
  {
    // The panel never takes keyboard focus from a window an agent may be typing into: nothing in the
    // shell raises or focuses a window. A window shows itself (which focuses it) only when it first
    // appears or when the operator launches the app again; each such call says why it is allowed.
    files: ['src/main/electron/**/*.ts', 'src/preload/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'CallExpression[callee.property.name=/^(focus|moveTop|focusOnWebView|setAlwaysOnTop|requestFocus|show)$/]',
          message: 'The panel must not take keyboard focus on its own: reach the operator with a notification or the flashing task-bar entry (attention.ts).',
        },
      ],
    },
  },
  {
    files: ['src/preload/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            layer('main', 'The preload imports only electron and src/shared.'),
            layer('renderer', 'The preload imports only electron and src/shared.'),
          ],
        },
      ],
    },
  },
  {
    files: ['src/renderer/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'The renderer talks only to PanelApi.' }],
          patterns: [
            layer('main', 'The renderer imports only src/shared.'),
            layer('preload', 'The renderer imports only src/shared.'),
            { regex: '^node:', message: 'The renderer runs in a browser: no Node modules.' },
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.object.name='window'][callee.property.name='focus']",
          message: 'The panel must not raise its own window: the operator may be watching an agent type elsewhere.',
        },
      ],
    },
  },
  {
    files: ['test/**/*.{ts,tsx}', 'bench/**/*.ts', 'scripts/**/*.{js,mjs}', 'bin/**', '*.config.{js,ts,mjs}'],
    rules: { 'no-restricted-imports': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
