/**
 * Schedules fired by workers, on every store: a worker's `schedules` are written at start and
 * fired by its scheduler on a timer, each slot once however many workers run one; a schedule
 * changed from another process is picked up at once; missed slots follow the schedule's policy.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'

import type { Job, JobSchedule } from '../../src/core/job.js'
import { pauseSchedule, putSchedule, resumeSchedule, type FiredSlots } from '../../src/index.js'
import { normalizeSchedule, type ScheduleOptions } from '../../src/core/schedule.js'
import { waitFor } from '../support/async.js'
import { allJobs } from '../support/store-harness.js'
import { freshStore, STORES } from '../support/stores.js'
import { startWorker, stopWorker } from '../support/workers.js'

const EVERY_SECOND: ScheduleOptions = {
  id: 'tick',
  cron: '* * * * * *',
  job: { name: 'tick', payload: { n: 1 } },
}

function slotsOf(jobs: readonly Job[]): number[] {
  return jobs.map((job) => job.schedule!.slot).sort((a, b) => a - b)
}

for (const store of STORES) {
  describe(`schedules fired by workers on ${store.name}`, { skip: store.skip }, () => {
    it("fires a worker's schedule each slot, and its handler sees the slot", async (t) => {
      const harness = await freshStore(t, store)
      const seen: JobSchedule[] = []
      const { worker, errors } = await startWorker(t, {
        store: harness.store,
        schedules: [EVERY_SECOND],
        handlers: { tick: (_payload, ctx) => void seen.push(ctx.job.schedule!) },
      })
      await waitFor(async () => seen.length >= 3, 10_000, 'three slots handled')
      await stopWorker(worker)
      assert.deepEqual(errors, [])
      for (const schedule of seen) {
        assert.equal(schedule.id, 'tick')
        assert.equal(schedule.slot % 1000, 0, 'a slot is a whole second')
        assert.equal(schedule.late, false)
      }
      const slots = seen.map((s) => s.slot)
      assert.equal(new Set(slots).size, slots.length, 'no slot twice')
    })

    it('three workers, each with a scheduler on its own connection, fire each slot once', async (t) => {
      const harness = await freshStore(t, store)
      const fires: FiredSlots[] = []
      const workers = []
      for (let i = 0; i < 3; i++) {
        const peer = i === 0 ? harness.store : await harness.openPeer()
        const started = await startWorker(t, {
          store: peer,
          schedules: [EVERY_SECOND],
          handlers: { tick: () => {} },
        })
        started.worker.on('schedule:fired', (fire) => fires.push(fire))
        workers.push(started)
      }
      await new Promise((resolve) => setTimeout(resolve, 4500))
      for (const { worker } of workers) await stopWorker(worker)
      for (const { errors } of workers) assert.deepEqual(errors, [])
      const jobs = await allJobs(harness.store)
      const slots = slotsOf(jobs)
      assert.ok(slots.length >= 3, `at least 3 slots in 4.5 s (got ${slots.length})`)
      assert.equal(new Set(slots).size, slots.length, 'each slot fired once')
      for (let i = 1; i < slots.length; i++) assert.equal(slots[i]! - slots[i - 1]!, 1000, 'no slot skipped')
      assert.equal(fires.length, jobs.length, 'one winning fire per job')
    })

    it('a schedule added, paused and resumed from another process is followed at once', async (t) => {
      const harness = await freshStore(t, store)
      const seen: string[] = []
      const { worker } = await startWorker(t, {
        store: harness.store,
        handlers: { tick: (_payload, ctx) => void seen.push(ctx.job.schedule!.id) },
      })
      const admin = await harness.openPeer()
      await putSchedule(admin, { ...EVERY_SECOND, id: 'added' })
      await waitFor(async () => seen.includes('added'), 5000, 'the added schedule fired')
      await pauseSchedule(admin, 'added')
      // A fire in flight as the pause committed may still land: count from a moment later.
      await new Promise((resolve) => setTimeout(resolve, 300))
      const before = (await allJobs(harness.store)).length
      await new Promise((resolve) => setTimeout(resolve, 2200))
      assert.equal((await allJobs(harness.store)).length, before, 'nothing fired while paused')
      await resumeSchedule(admin, 'added')
      await waitFor(
        async () => (await allJobs(harness.store)).length > before,
        5000,
        'fired again after resume',
      )
      await stopWorker(worker)
    })

    for (const [missed, expect] of [
      [
        'skip',
        (jobs: Job[]) =>
          assert.deepEqual(
            jobs.map((j) => j.schedule!.late),
            [false],
          ),
      ],
      [
        'once',
        (jobs: Job[]) =>
          assert.deepEqual(
            jobs.map((j) => j.schedule!.late),
            [true],
          ),
      ],
      [
        'all',
        (jobs: Job[]) => {
          assert.ok(jobs.length >= 60 && jobs.length <= 61, `a job per missed minute (got ${jobs.length})`)
          // 61 when a minute turned during the test: that slot fired on time, after the catch-up's
          // newest, which was not late either.
          const onTime = jobs.length - 60 + 1
          assert.deepEqual(
            jobs.map((j) => j.schedule!.late),
            jobs.map((_, i) => i < jobs.length - onTime),
          )
        },
      ],
    ] as const) {
      it(`missed slots after an hour without a scheduler: ${missed}`, async (t) => {
        const harness = await freshStore(t, store)
        const definition = normalizeSchedule({
          id: 'minutely',
          cron: '* * * * *',
          job: { name: 'tick' },
          missed,
        })
        // Created an hour ago, and no scheduler ran since: 60 slots are due, the newest within a minute.
        await harness.store.schedules({ put: [definition], now: Date.now() - 3_600_000 })
        const { worker } = await startWorker(t, { store: harness.store, handlers: { tick: () => {} } })
        await waitFor(async () => (await allJobs(harness.store)).length > 0, 5000, 'the catch-up fired')
        await new Promise((resolve) => setTimeout(resolve, 300))
        await stopWorker(worker)
        const jobs = (await allJobs(harness.store)).sort((a, b) => a.schedule!.slot - b.schedule!.slot)
        expect(jobs)
        const newest = jobs.at(-1)!.schedule!.slot
        assert.ok(Date.now() - newest < 61_000, 'the newest job is of the newest slot')
      })
    }

    it('overlap skip: no slot fires while the last run is still going', async (t) => {
      const harness = await freshStore(t, store)
      let running = 0
      let most = 0
      const { worker } = await startWorker(t, {
        store: harness.store,
        schedules: [{ ...EVERY_SECOND, overlap: 'skip' }],
        handlers: {
          tick: async () => {
            most = Math.max(most, ++running)
            await new Promise((resolve) => setTimeout(resolve, 2500))
            running--
          },
        },
      })
      await new Promise((resolve) => setTimeout(resolve, 5500))
      await stopWorker(worker)
      assert.equal(most, 1, 'one run at a time')
      const jobs = await allJobs(harness.store)
      assert.ok(jobs.length >= 2 && jobs.length <= 3, `a run every 3 s or so in 5.5 s (got ${jobs.length})`)
    })
  })
}
