import { after } from 'node:test'

import { postgresHarnesses, skipUnlessPostgres } from '../helpers/postgres-harness.js'
import { runStoreConformance } from './store.case.js'

if (!(await skipUnlessPostgres('Store conformance: PostgresStore'))) {
  const { createHarness, dropSchema } = postgresHarnesses()
  after(dropSchema)
  runStoreConformance({ name: 'PostgresStore', createHarness, skip: [] })
}
