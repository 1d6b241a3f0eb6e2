import { createPostgresHarness, skipUnlessPostgres } from '../helpers/postgres-harness.js'
import { runStoreConformance } from './store.case.js'

if (!(await skipUnlessPostgres('Store conformance: PostgresStore'))) {
  runStoreConformance({ name: 'PostgresStore', createHarness: createPostgresHarness, skip: [] })
}
