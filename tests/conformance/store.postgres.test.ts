import { after } from 'node:test'

import { postgresHarnesses, postgresUnreachableReason } from '../support/postgres-harness.js'
import { whenAvailable } from '../support/services.js'
import { runStoreConformance } from './store.case.js'

await whenAvailable(postgresUnreachableReason(), () => {
  const { createHarness, dropSchema } = postgresHarnesses()
  after(dropSchema)
  runStoreConformance({ name: 'PostgresStore', createHarness, skip: [] })
})
