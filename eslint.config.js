// @ts-check
import js from '@eslint/js'
import globals from 'globals'
import tseslint from 'typescript-eslint'

const ABOVE_STORE = [
  '**/client/**',
  '**/worker/**',
  '**/metrics/**',
  '**/admin/**',
  '**/cli/**',
  '**/tracing/**',
]
const BACKENDS = [
  '**/store/sqlite/**',
  '**/store/postgres/**',
  '**/store/redis/**',
  '../sqlite/**',
  '../postgres/**',
  '../redis/**',
]
const DRIVERS = { sqlite: 'better-sqlite3', postgres: 'pg', redis: 'ioredis' }

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.bench-tmp/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { languageOptions: { globals: globals.node } },
  // The dashboard's script runs in the browser, not in Node.
  { files: ['src/dashboard/assets/**/*.js'], languageOptions: { globals: globals.browser } },
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  // Dependencies point one way: core ← store ← tracing ← client, worker ← metrics, admin ← dashboard ← cli (and
  // the entry points under src/, which export them). A layer imports only those below it; the
  // backends never import each other, nor another backend's driver. scripts/check-cycles.mjs catches circles inside a layer.
  layer(['src/core/**/*.ts'], { folders: ['../*'] }),
  layer(['src/store/**/*.ts'], { folders: ABOVE_STORE }),
  layer(['src/store/kernel/**/*.ts'], { folders: [...ABOVE_STORE, ...BACKENDS] }),
  ...Object.entries(DRIVERS).map(([backend, driver]) =>
    layer([`src/store/${backend}/**/*.ts`], {
      folders: [...ABOVE_STORE, ...BACKENDS.filter((other) => !other.includes(`/${backend}/`))],
      packages: Object.values(DRIVERS).filter((other) => other !== driver),
    }),
  ),
  // Tracing serves the client and the worker, below both: it sees jobs and the store's types only.
  layer(['src/tracing/**/*.ts'], {
    folders: ['**/client/**', '**/worker/**', '**/metrics/**', '**/admin/**', '**/cli/**', ...BACKENDS],
  }),
  layer(['src/client/**/*.ts'], {
    folders: ['**/worker/**', '**/metrics/**', '**/admin/**', '**/cli/**', ...BACKENDS],
  }),
  layer(['src/worker/**/*.ts'], {
    folders: ['**/client/**', '**/metrics/**', '**/admin/**', '**/cli/**', ...BACKENDS],
  }),
  // Metrics observe workers and stores from above: only the CLI (and the entry point) use them.
  layer(['src/metrics/**/*.ts'], { folders: ['**/client/**', '**/admin/**', '**/cli/**', ...BACKENDS] }),
  layer(['src/admin/**/*.ts'], { folders: ['**/metrics/**', '**/cli/**', '**/dashboard/**', ...BACKENDS] }),
  // The dashboard is built on the admin layer only, beside the CLI (which serves it).
  layer(['src/dashboard/**/*.ts'], {
    folders: ['**/client/**', '**/worker/**', '**/metrics/**', '**/cli/**', ...BACKENDS],
  }),
)

/** A rule that the files given import nothing from these folders (import patterns) or packages. */
function layer(files, { folders, packages = [] }) {
  const patterns = [
    { group: folders, message: 'dependencies point one way (eslint.config.js names the layers)' },
    ...packages.map((name) => ({
      group: [name, `${name}/*`],
      message: 'a backend loads only its own driver',
    })),
  ]
  return { files, ignores: ['**/*.test.ts'], rules: { 'no-restricted-imports': ['error', { patterns }] } }
}
