/**
 * What a SqliteStore is opened with: its options, the checks they pass before any file is
 * touched, and the `sqlite:` URL that `ferry --store` and openStore() take.
 */
import { ValidationError } from '../../core/errors.js'
import { assertKnownKeys, optionKeys } from '../../core/option-keys.js'

export type SqliteDurability = 'full' | 'normal'

export interface SqliteStoreOptions {
  /** The database file; created when missing, unless `create` is false. */
  path: string
  /**
   * Create the database file when it does not exist (default). False: a missing file is a
   * StoreUnavailableError, so a mistyped path is reported instead of starting an empty database.
   */
  create?: boolean
  /**
   * 'full' (default): every commit is fsynced before enqueue resolves, so it survives power loss.
   * 'normal': survives a crash of the process, but an OS crash or power loss may lose the latest
   * commits (docs/backends.md).
   */
  durability?: SqliteDurability
  /** How long a write waits for another process's write lock. Default 5000 ms. */
  busyTimeoutMs?: number
  /** Apply pending migrations on open (default). When false, an outdated schema is an error. */
  migrate?: boolean
  /** Checkpoint and truncate the WAL when it grows past this. Default 64 MiB. */
  walLimitBytes?: number
  /**
   * Permission bits of the database file when this store creates it; SQLite gives its -wal and
   * -shm files the same. Default 0o600, owner only: job payloads may hold personal data. A file
   * that exists keeps its own.
   */
  fileMode?: number
}

/** The options with their defaults filled in, as the store's parts are built from them. */
export type ResolvedSqliteOptions = Required<Omit<SqliteStoreOptions, 'migrate'>>

const SQLITE_OPTION_KEYS = optionKeys<SqliteStoreOptions>({
  path: true,
  durability: true,
  busyTimeoutMs: true,
  migrate: true,
  walLimitBytes: true,
  fileMode: true,
  create: true,
})

/** The options a `sqlite:` URL may set, by their names in SqliteStoreOptions. */
const SQLITE_URL_PARAMS = ['durability', 'fileMode'] as const satisfies readonly (keyof SqliteStoreOptions)[]

const DEFAULT_FILE_MODE = 0o600

/**
 * Checks the options and fills in the defaults. It runs before the file is created: a misspelt
 * option must leave nothing behind.
 */
export function resolveSqliteOptions(options: SqliteStoreOptions): ResolvedSqliteOptions {
  assertKnownKeys(options, SQLITE_OPTION_KEYS, '')
  const {
    path,
    durability = 'full',
    busyTimeoutMs = 5000,
    walLimitBytes = 64 * 1024 * 1024,
    fileMode = DEFAULT_FILE_MODE,
    create = true,
  } = options
  if (typeof path !== 'string' || path === '' || path === ':memory:') {
    throw new ValidationError('invalid_option', 'path', 'must be the path of a database file (not :memory:)')
  }
  if (durability !== 'full' && durability !== 'normal') {
    throw new ValidationError(
      'invalid_option',
      'durability',
      `must be 'full' or 'normal' (got ${String(durability)})`,
    )
  }
  if (!Number.isInteger(fileMode) || fileMode < 0 || fileMode > 0o777) {
    throw new ValidationError(
      'invalid_option',
      'fileMode',
      `must be permission bits from 0o000 to 0o777, e.g. 0o600 (got ${String(fileMode)})`,
    )
  }
  return { path, durability, busyTimeoutMs, walLimitBytes, fileMode, create }
}

/**
 * Parses `sqlite:./path.db`, `sqlite:///absolute/path.db`, with optional `?durability=normal` and
 * `?fileMode=0640` (octal permission bits for a file the store creates).
 */
export function parseSqliteUrl(url: string): SqliteStoreOptions {
  const rest = url.replace(/^sqlite:/i, '')
  const [location = '', query = ''] = rest.split('?', 2)
  const path = location.startsWith('//') ? location.slice(2) : location
  const params = new URLSearchParams(query)
  assertKnownKeys(Object.fromEntries(params), SQLITE_URL_PARAMS, 'store')
  const options: SqliteStoreOptions = { path }
  const durability = params.get('durability')
  if (durability !== null) options.durability = durability as SqliteDurability
  const fileMode = params.get('fileMode')
  if (fileMode !== null) options.fileMode = /^0?[0-7]{3}$/.test(fileMode) ? parseInt(fileMode, 8) : NaN
  return options
}
