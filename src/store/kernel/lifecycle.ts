/**
 * Opening and closing, as every backend's open() and applyMigrations() get them from here: a
 * store just constructed is closed again whatever goes wrong before it is handed out, so that an
 * open that fails (a schema too old, a server refused) leaks no connection, file handle or timer.
 */

interface Closable {
  close(): Promise<void>
}

/**
 * The store, once `prepare` (migrate or check the schema, connect, read the control record) has
 * succeeded; otherwise the store is closed and prepare's error thrown.
 */
export async function preparedOrClosed<S extends Closable>(
  store: S,
  prepare: (store: S) => Promise<unknown>,
): Promise<S> {
  try {
    await prepare(store)
  } catch (error) {
    await store.close()
    throw error
  }
  return store
}

/** What `use` returns, with the store closed after it, whatever happened: a one-off command. */
export async function usedThenClosed<S extends Closable, T>(
  store: S,
  use: (store: S) => Promise<T>,
): Promise<T> {
  try {
    return await use(store)
  } finally {
    await store.close()
  }
}
