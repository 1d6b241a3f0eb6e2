/**
 * The Store conformance suite: the real definition of the Store contract (src/store/store.ts). Every
 * backend's test file calls runStoreConformance with a harness; a backend that cannot pass a case lists
 * it in `skip` with a reason, and the case shows up as skipped.
 *
 * The cases live by area in tests/conformance/store/, one file each, in the order they run here;
 * store/kit.ts holds what they share. They are written only against the Store interface and the
 * core types: nothing there may know which backend runs it. Time is passed as `now` wherever the
 * contract allows, so no test sleeps to let time pass; only waitForWork, which is about real time,
 * waits for real (and briefly).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'

import { ValidationError } from '../../src/core/errors.js'
import type { CreateHarness, StoreHarness } from '../support/store-harness.js'
import { adminCases } from './store/admin.js'
import { changeJobsCases } from './store/change-jobs.js'
import { claimCases } from './store/claim.js'
import { enqueueCases } from './store/enqueue.js'
import { eventsCases } from './store/events.js'
import { jobListsCases } from './store/job-lists.js'
import { LEASE_MS, type ConformanceCases } from './store/kit.js'
import { lifecycleCases } from './store/lifecycle.js'
import { progressCases } from './store/progress.js'
import { queueControlCases } from './store/queue-control.js'
import { queueLimitsCases } from './store/queue-limits.js'
import { recoverCases } from './store/recover.js'
import { renewCases } from './store/renew.js'
import { retentionCases } from './store/retention.js'
import { schedulesCases } from './store/schedules.js'
import { settleCases } from './store/settle.js'
import { uniqueModesCases } from './store/unique-modes.js'
import { waitCases } from './store/wait.js'
import { workersCases } from './store/workers.js'

export interface SkipEntry {
  /** Test names, exactly as the suite spells them. */
  tests: string[]
  reason: string
}

export interface StoreConformanceOptions {
  /** Shown as the suite's title, e.g. 'SqliteStore'. */
  name: string
  createHarness: CreateHarness
  skip?: readonly SkipEntry[]
}

/** The areas, in the order they run. */
const AREAS: readonly ((cases: ConformanceCases) => void)[] = [
  enqueueCases,
  claimCases,
  settleCases,
  renewCases,
  progressCases,
  recoverCases,
  waitCases,
  queueControlCases,
  queueLimitsCases,
  schedulesCases,
  uniqueModesCases,
  retentionCases,
  adminCases,
  jobListsCases,
  changeJobsCases,
  eventsCases,
  workersCases,
  lifecycleCases,
]

export function runStoreConformance({ name, createHarness, skip = [] }: StoreConformanceOptions): void {
  const skipReasons = new Map<string, string>()
  for (const entry of skip) for (const title of entry.tests) skipReasons.set(title, entry.reason)
  const defined = new Set<string>()

  const bare: ConformanceCases['bare'] = (title, body) => {
    if (defined.has(title)) throw new Error(`two conformance tests are named "${title}"`)
    defined.add(title)
    const reason = skipReasons.get(title)
    it(title, reason === undefined ? {} : { skip: reason }, body)
  }

  const test: ConformanceCases['test'] = (title, body) => {
    bare(title, async () => {
      const h = await createHarness()
      try {
        await body(h)
      } finally {
        await h.close()
      }
    })
  }

  const deliveryTest: ConformanceCases['deliveryTest'] = (title, body) => {
    test(title, async (h: StoreHarness) => {
      if (!h.store.capabilities.delivery) {
        const claim = { limit: 1, leaseMs: LEASE_MS, workerId: 'worker-1' }
        await assert.rejects(
          h.store.waitForWork({ queues: ['default'], timeoutMs: 10, claim }),
          (error: unknown) => error instanceof ValidationError && error.field === 'claim',
          'a store without delivery refuses a claim on its waits',
        )
        await assert.rejects(
          h.store.renew({ leases: [], leaseMs: LEASE_MS, delivered: true }),
          (error: unknown) => error instanceof ValidationError && error.field === 'delivered',
          'and taking delivered jobs',
        )
        return
      }
      await body(h, (params) => h.store.waitForWork(params))
    })
  }

  describe(`Store conformance: ${name}`, () => {
    for (const area of AREAS) area({ test, bare, deliveryTest, createHarness })

    it('names only tests of this suite in its skip list', () => {
      assert.deepEqual(
        [...skipReasons.keys()].filter((title) => !defined.has(title)),
        [],
        'every skipped test name matches a test',
      )
    })
  })
}
