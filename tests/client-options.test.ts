/**
 * The producer API refuses misspelt options before it writes anything: createClient's, the
 * options of enqueueMany, and the keys of each job given to it.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import type { TransactionOption } from '../src/client/client.js'
import { createClient, type ClientOptions, type JobSpec } from '../src/index.js'
import { allJobs } from './support/store-harness.js'
import { unknownOption } from './support/unknown-option.js'
import { tempStore } from './support/sqlite-harness.js'

test('createClient refuses a misspelt option', async (t) => {
  const { store } = await tempStore(t)
  assert.throws(
    () => createClient({ store, maxPayloadByte: 10 } as ClientOptions),
    unknownOption('maxPayloadByte', 'maxPayloadBytes', ['store', 'maxPayloadBytes']),
  )
})

test('enqueueMany refuses a misspelt option of the call or of a job, and stores nothing', async (t) => {
  const { store } = await tempStore(t)
  const client = createClient({ store })
  const jobs: JobSpec[] = [{ name: 'a', payload: 1 }]
  await assert.rejects(
    client.enqueueMany(jobs, { txn: null } as TransactionOption),
    unknownOption('txn', 'tx', ['tx']),
  )
  // Without the check, the job would go to the default queue with every default.
  const misspelt = [...jobs, { name: 'b', payload: 2, option: { queue: 'mail' } } as JobSpec]
  await assert.rejects(
    client.enqueueMany(misspelt),
    unknownOption('jobs[1].option', 'options', ['name', 'payload', 'options']),
  )
  await client.close()
  assert.deepEqual(await allJobs(store), [])
})
