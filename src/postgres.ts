// 'ferry/postgres': the PostgreSQL store (needs the pg package).
export {
  PostgresStore,
  parsePostgresUrl,
  type PostgresStoreOptions,
  type PostgresQueryable,
} from './store/postgres/postgres-store.js'
