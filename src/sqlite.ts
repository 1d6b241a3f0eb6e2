// 'ferry/sqlite': the embedded SQLite store.
export { SqliteStore, type SqliteStoreOptions, type SqliteDurability } from './store/sqlite/sqlite-store.js'
