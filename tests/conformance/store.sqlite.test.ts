import { createSqliteHarness } from '../support/sqlite-harness.js'
import { runStoreConformance } from './store.case.js'

runStoreConformance({ name: 'SqliteStore', createHarness: createSqliteHarness, skip: [] })
