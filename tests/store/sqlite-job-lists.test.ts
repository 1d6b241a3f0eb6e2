/**
 * listJobs on SQLite reads pages from an index for every combination of filters: EXPLAIN QUERY
 * PLAN of the walk the store picks shows a SEARCH, never a SCAN of the jobs table (a SCAN read
 * 450-650 ms at 1,000,000 jobs and held the event loop for it: better-sqlite3 is synchronous).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { JOB_STATES, type JobState } from '../../src/core/job.js'
import type Database from 'better-sqlite3'
import { listJobsWalk } from '../../src/store/sqlite/sqlite-store.js'
import type { CheckedListFilters } from '../../src/store/params.js'
import { sql } from '../../src/store/sqlite/generated/assets.js'
import { tempDatabase } from '../support/sqlite-harness.js'

const NO_FILTER: CheckedListFilters = {
  state: undefined,
  queue: undefined,
  name: undefined,
  uniqueKey: undefined,
  createdAfter: undefined,
  createdBefore: undefined,
  payloadContains: undefined,
  limit: 50,
  cursor: undefined,
}

test('every combination of listJobs filters walks an index, never a scan of the jobs table', async (t) => {
  const store = await tempDatabase(t).open()
  const db = (store as unknown as { db: Database.Database }).db
  const states: (JobState | undefined)[] = [undefined, ...JOB_STATES]
  for (const state of states)
    for (const queue of [undefined, 'emails'])
      for (const uniqueKey of [undefined, 'report:1'])
        for (const name of [undefined, 'send']) {
          const filters = {
            ...NO_FILTER,
            state,
            queue,
            uniqueKey,
            name,
            createdAfter: name === undefined ? undefined : 1,
          }
          const walk = listJobsWalk(filters)
          const plan = db.prepare(`EXPLAIN QUERY PLAN ${sql[walk]}`).all({
            up_to: 100,
            budget: 10,
            state: state ?? null,
            queue: queue ?? null,
            name: name ?? null,
            unique_key: uniqueKey ?? null,
            created_after: null,
            created_before: null,
          }) as { detail: string }[]
          const details = plan.map((row) => row.detail)
          const label = `${walk} for ${JSON.stringify({ state, queue, uniqueKey, name })}: ${details.join('; ')}`
          assert.deepEqual(
            details.filter((detail) => /^SCAN ferry_jobs\b/.test(detail)),
            [],
            label,
          )
          assert.ok(
            details.some((detail) =>
              /^SEARCH ferry_jobs USING (INDEX|COVERING INDEX|INTEGER PRIMARY KEY)/.test(detail),
            ),
            label,
          )
          assert.ok(!details.some((detail) => /TEMP B-TREE/.test(detail)), `no sort: ${label}`)
        }
})
