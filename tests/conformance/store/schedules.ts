/**
 * Schedules as the store keeps them (created, changed, paused, resumed and removed by schedules(),
 * one atomic step a call) and fired by fireSchedule(): a compare-and-set of the schedule's last
 * slot and the enqueue of its jobs in one step, so that any number of schedulers racing for a slot
 * fire it once. Also what every job carries beside its columns (its slot, its own backoff). One
 * area of the Store conformance suite (tests/conformance/store.case.ts runs them all).
 */
import assert from 'node:assert/strict'
import { describe } from 'node:test'

import { ValidationError } from '../../../src/core/errors.js'
import type { JobBackoff, JobTraceContext, NewJob } from '../../../src/core/job.js'
import { firedJob, type ScheduleDefinition } from '../../../src/core/schedule.js'
import type { FireScheduleParams, Schedule, Store } from '../../../src/store/store.js'
import { waitReason } from '../../support/store-calls.js'
import { allJobs, newJob } from '../../support/store-harness.js'
import { within } from '../../support/async.js'
import {
  SECOND,
  MINUTE,
  HOUR,
  claimAt,
  completed,
  enqueueJob,
  enqueueJobs,
  getExisting,
  ids,
  one,
  type ConformanceCases,
} from './kit.js'

const T = 1_800_000_000_000

function definition(id: string, overrides: Partial<ScheduleDefinition> = {}): ScheduleDefinition {
  return {
    id,
    cron: '0 * * * *',
    timeZone: 'UTC',
    job: {
      name: 'report',
      queue: 'default',
      payload: '{"kind":"hourly"}',
      priority: 0,
      maxAttempts: 3,
      timeoutMs: null,
      group: null,
      expiresInMs: null,
      backoff: null,
    },
    missed: 'skip',
    overlap: 'allow',
    ...overrides,
  }
}

async function scheduleOf(store: Store, id: string): Promise<Schedule | undefined> {
  return (await store.schedules()).schedules.find((s) => s.id === id)
}

/** The fire of `slots` planned from `schedule` as it is, each slot on time. */
function fireOf(
  schedule: Schedule,
  slots: readonly number[],
  now = slots.at(-1) ?? schedule.lastSlot,
): FireScheduleParams {
  return {
    id: schedule.id,
    version: schedule.version,
    lastSlot: schedule.lastSlot,
    toSlot: slots.at(-1) ?? schedule.lastSlot,
    jobs: slots.map((slot) => firedJob(schedule.id, schedule.job, slot, false)),
    now,
  }
}

async function created(store: Store, def: ScheduleDefinition, now = T): Promise<Schedule> {
  const { schedules } = await store.schedules({ put: [def], now })
  return schedules.find((s) => s.id === def.id)!
}

export function schedulesCases({ test }: ConformanceCases): void {
  describe('schedules: the record', () => {
    test('a new schedule starts at its creation, version 1, not paused, listed by id', async ({ store }) => {
      const { schedules, version } = await store.schedules({
        put: [definition('b'), definition('a')],
        now: T,
      })
      assert.deepEqual(
        schedules.map((s) => s.id),
        ['a', 'b'],
      )
      const a = schedules[0]!
      assert.deepEqual(a, {
        ...definition('a'),
        pausedAt: null,
        lastSlot: T,
        lastJobId: null,
        version: 1,
        createdAt: T,
        updatedAt: T,
      })
      assert.equal((await store.control()).schedulesVersion, version)
    })

    test('putting schedules leaves the others: code in two apps sharing a store', async ({ store }) => {
      await store.schedules({ put: [definition('app-1')], now: T })
      const { schedules } = await store.schedules({ put: [definition('app-2')], now: T })
      assert.deepEqual(
        schedules.map((s) => s.id),
        ['app-1', 'app-2'],
      )
    })

    test('the same definition again changes nothing; a changed one moves the version, not the last slot', async ({
      store,
    }) => {
      const first = await created(store, definition('nightly'))
      const before = (await store.control()).schedulesVersion
      const again = await created(store, definition('nightly'), T + HOUR)
      assert.deepEqual(again, first)
      assert.equal((await store.control()).schedulesVersion, before)
      const changed = await created(
        store,
        definition('nightly', { cron: '0 2 * * *', missed: 'once' }),
        T + HOUR,
      )
      assert.equal(changed.version, 2)
      assert.equal(changed.cron, '0 2 * * *')
      assert.equal(changed.missed, 'once')
      assert.equal(changed.lastSlot, T)
      assert.equal(changed.createdAt, T)
      assert.equal(changed.updatedAt, T + HOUR)
      assert.notEqual((await store.control()).schedulesVersion, before)
    })

    test('pause and resume: a resumed schedule starts again from its resumption', async ({ store }) => {
      await created(store, definition('s'))
      const paused = (await store.schedules({ pause: ['s'], now: T + MINUTE })).schedules[0]!
      assert.equal(paused.pausedAt, T + MINUTE)
      assert.equal(paused.version, 2)
      const pausedAgain = (await store.schedules({ pause: ['s'], now: T + 2 * MINUTE })).schedules[0]!
      assert.deepEqual(pausedAgain, paused, 'pausing a paused schedule changes nothing')
      const resumed = (await store.schedules({ resume: ['s'], now: T + 3 * HOUR })).schedules[0]!
      assert.equal(resumed.pausedAt, null)
      assert.equal(resumed.lastSlot, T + 3 * HOUR)
      assert.equal(resumed.version, 3)
    })

    test('remove deletes; ids of no schedule are ignored by every change', async ({ store }) => {
      await store.schedules({ put: [definition('a'), definition('b')], now: T })
      const { schedules } = await store.schedules({
        remove: ['a', 'nope'],
        pause: ['nope'],
        resume: ['nope'],
      })
      assert.deepEqual(
        schedules.map((s) => s.id),
        ['b'],
      )
    })

    test('every change moves the store schedules version, which the control record carries', async ({
      store,
    }) => {
      const versions = [(await store.control()).schedulesVersion]
      for (const params of [
        { put: [definition('a')] },
        { pause: ['a'] },
        { resume: ['a'] },
        { put: [definition('a', { cron: '*/5 * * * *' })] },
        { remove: ['a'] },
      ]) {
        const { version } = await store.schedules({ ...params, now: T })
        assert.equal((await store.control()).schedulesVersion, version)
        versions.push(version)
      }
      assert.equal(new Set(versions).size, versions.length, `versions ${versions.join(', ')} all differ`)
    })

    test('a schedule change wakes a waiting worker of another process', async (h) => {
      const peer = await h.openPeer()
      const waiting = waitReason(peer, { queues: ['elsewhere'], timeoutMs: 10 * SECOND })
      await new Promise((resolve) => setTimeout(resolve, 200))
      await h.store.schedules({ put: [definition('a')] })
      assert.equal(await within(5 * SECOND, 'the wake-up', waiting), 'notified')
    })

    // A worker reads the control record, then listens for changes at its first wait: a change made
    // between the two was announced to nobody it could hear, and its scheduler would sleep through it.
    test('a schedule changed since the control record was read wakes the first wait', async (h) => {
      const peer = await h.openPeer()
      await peer.control()
      await h.store.schedules({ put: [definition('a')] })
      const waiting = waitReason(peer, { queues: ['elsewhere'], timeoutMs: 3 * SECOND })
      assert.equal(await within(5 * SECOND, 'the wake-up', waiting), 'notified')
    })

    test('bad definitions are refused, naming the field, and nothing is written', async ({ store }) => {
      const cases: [unknown, string][] = [
        [definition('ok', { cron: 'every day' }), 'put[1].cron'],
        [definition('ok', { timeZone: 'Mars/Base' }), 'put[1].timeZone'],
        [definition('not ok!'), 'put[1].id'],
        [definition('ok', { missed: 'sometimes' as never }), 'put[1].missed'],
        [definition('ok', { overlap: 'queue' as never }), 'put[1].overlap'],
        [definition('ok', { job: { ...definition('x').job, payload: '{' } }), 'put[1].job.payload'],
        [definition('ok', { job: { ...definition('x').job, queue: 'a b' } }), 'put[1].job.queue'],
        [definition('ok', { job: { ...definition('x').job, maxAttempts: 0 } }), 'put[1].job.maxAttempts'],
      ]
      for (const [bad, field] of cases) {
        await assert.rejects(
          store.schedules({ put: [definition('first'), bad as ScheduleDefinition] }),
          (error: unknown) => error instanceof ValidationError && error.field === field,
          field,
        )
      }
      await assert.rejects(
        store.schedules({ put: [definition('a'), definition('a')] }),
        (error: unknown) => error instanceof ValidationError && error.field === 'put[1].id',
      )
      assert.deepEqual((await store.schedules()).schedules, [])
    })
  })

  describe('schedules: firing', () => {
    test('a fire enqueues the slot job, with its slot and key, and moves the last slot', async ({
      store,
    }) => {
      const schedule = await created(store, definition('hourly'))
      const slot = T + HOUR
      const result = await store.fireSchedule(fireOf(schedule, [slot]))
      assert.equal(result.outcome, 'fired')
      const [id] = (result as { ids: string[] }).ids
      const job = await getExisting(store, id!)
      assert.equal(job.state, 'ready')
      assert.equal(job.name, 'report')
      assert.deepEqual(job.payload, { kind: 'hourly' })
      assert.equal(job.maxAttempts, 3)
      assert.deepEqual(job.schedule, { id: 'hourly', slot, late: false })
      assert.equal(job.uniqueKey, `cron:hourly:${new Date(slot).toISOString()}`)
      const after = (await scheduleOf(store, 'hourly'))!
      assert.equal(after.lastSlot, slot)
      assert.equal(after.lastJobId, id)
      assert.equal(after.version, schedule.version, 'a fire is not a change of the schedule')
      const [claimed] = await claimAt(store, slot)
      assert.deepEqual(claimed?.schedule, { id: 'hourly', slot, late: false })
    })

    test('a fire planned from a last slot that moved is stale: nothing written, the schedule as it is', async ({
      store,
    }) => {
      const schedule = await created(store, definition('s'))
      const fire = fireOf(schedule, [T + HOUR])
      assert.equal((await store.fireSchedule(fire)).outcome, 'fired')
      const again = await store.fireSchedule(fire)
      assert.equal(again.outcome, 'stale')
      assert.deepEqual((again as { schedule: Schedule }).schedule, await scheduleOf(store, 's'))
      assert.equal((await allJobs(store)).length, 1)
    })

    test('a fire planned from an older version, a paused or a removed schedule is stale', async ({
      store,
    }) => {
      const schedule = await created(store, definition('s'))
      const fire = fireOf(schedule, [T + HOUR])
      await store.schedules({ put: [definition('s', { cron: '30 * * * *' })], now: T })
      const changed = await store.fireSchedule(fire)
      assert.equal(changed.outcome, 'stale')
      assert.equal((changed as { schedule: Schedule }).schedule.version, 2)
      const current = (await scheduleOf(store, 's'))!
      await store.schedules({ pause: ['s'], now: T })
      assert.equal((await store.fireSchedule(fireOf(current, [T + HOUR]))).outcome, 'stale')
      await store.schedules({ remove: ['s'] })
      assert.deepEqual(await store.fireSchedule(fireOf(current, [T + HOUR])), {
        outcome: 'stale',
        schedule: null,
      })
      assert.deepEqual(await allJobs(store), [])
    })

    test('schedulers of several processes racing for one slot fire it once', async (h) => {
      const stores = [h.store, await h.openPeer(), await h.openPeer()]
      for (let round = 1; round <= 5; round++) {
        const schedule = (await scheduleOf(h.store, 'race')) ?? (await created(h.store, definition('race')))
        const fire = fireOf(schedule, [T + round * HOUR])
        const results = await Promise.all(
          stores.flatMap((store) => [store.fireSchedule(fire), store.fireSchedule(fire)]),
        )
        assert.equal(results.filter((r) => r.outcome === 'fired').length, 1, `round ${round}`)
        assert.equal(results.filter((r) => r.outcome === 'stale').length, 5, `round ${round}`)
      }
      const jobs = await allJobs(h.store)
      assert.deepEqual(
        jobs.map((job) => job.schedule?.slot),
        [1, 2, 3, 4, 5].map((round) => T + round * HOUR),
      )
    })

    test('several slots in one fire: a job each, oldest first, the last one kept for overlap', async ({
      store,
    }) => {
      const schedule = await created(store, definition('s'))
      const slots = [T + HOUR, T + 2 * HOUR, T + 3 * HOUR]
      const fire: FireScheduleParams = {
        ...fireOf(schedule, slots),
        jobs: slots.map((slot, i) => firedJob('s', schedule.job, slot, i < 2)),
      }
      const result = await store.fireSchedule(fire)
      assert.equal(result.outcome, 'fired')
      const jobs = await allJobs(store)
      assert.deepEqual(ids(jobs), (result as { ids: string[] }).ids)
      assert.deepEqual(
        jobs.map((job) => job.schedule),
        slots.map((slot, i) => ({ id: 's', slot, late: i < 2 })),
      )
      assert.equal((await scheduleOf(store, 's'))!.lastJobId, jobs[2]!.id)
    })

    test('a fire that passes over every slot moves the last slot and enqueues nothing', async ({ store }) => {
      const schedule = await created(store, definition('s'))
      const result = await store.fireSchedule({ ...fireOf(schedule, []), toSlot: T + 5 * HOUR })
      assert.deepEqual(result, { outcome: 'fired', ids: [] })
      assert.equal((await scheduleOf(store, 's'))!.lastSlot, T + 5 * HOUR)
      assert.deepEqual(await allJobs(store), [])
    })

    test('overlap skip: a slot is passed over while the last run has not finished', async ({ store }) => {
      const schedule = await created(store, definition('s', { overlap: 'skip' }))
      const first = await store.fireSchedule(fireOf(schedule, [T + HOUR]))
      assert.equal(first.outcome, 'fired')
      const [job] = await claimAt(store, T + HOUR)
      const running = (await scheduleOf(store, 's'))!
      assert.deepEqual(await store.fireSchedule(fireOf(running, [T + 2 * HOUR])), { outcome: 'overlap' })
      const passed = (await scheduleOf(store, 's'))!
      assert.equal(passed.lastSlot, T + 2 * HOUR)
      assert.equal(passed.lastJobId, running.lastJobId)
      await store.settle({ settlements: [completed(job)], now: T + 2 * HOUR })
      assert.equal((await store.fireSchedule(fireOf(passed, [T + 3 * HOUR]))).outcome, 'fired')
      assert.equal((await allJobs(store)).length, 2)
    })

    test('overlap allow: a slot fires while the last run is still going', async ({ store }) => {
      const schedule = await created(store, definition('s'))
      await store.fireSchedule(fireOf(schedule, [T + HOUR]))
      await claimAt(store, T + HOUR)
      const next = (await scheduleOf(store, 's'))!
      assert.equal((await store.fireSchedule(fireOf(next, [T + 2 * HOUR]))).outcome, 'fired')
    })

    test("a slot whose key is held already is not enqueued again: its holder's id is given", async ({
      store,
    }) => {
      const schedule = await created(store, definition('s'))
      const slot = T + HOUR
      const holder = await enqueueJob(store, T, { uniqueKey: `cron:s:${new Date(slot).toISOString()}` })
      const result = await store.fireSchedule(fireOf(schedule, [slot]))
      assert.deepEqual(result, { outcome: 'fired', ids: [holder] })
      assert.equal((await allJobs(store)).length, 1)
      assert.equal((await scheduleOf(store, 's'))!.lastSlot, slot)
    })

    test('a fired job wakes a worker of another process waiting on its queue', async (h) => {
      const schedule = await created(h.store, definition('s'), Date.now() - SECOND)
      const peer = await h.openPeer()
      const waiting = waitReason(peer, { queues: ['default'], timeoutMs: 10 * SECOND })
      await new Promise((resolve) => setTimeout(resolve, 200))
      await h.store.fireSchedule(fireOf(schedule, [Date.now()], Date.now()))
      assert.equal(await within(5 * SECOND, 'the wake-up', waiting), 'notified')
    })

    test('bad fires are refused, naming the field, and nothing is written', async ({ store }) => {
      const schedule = await created(store, definition('s'))
      const good = fireOf(schedule, [T + HOUR])
      const cases: [FireScheduleParams, string][] = [
        [{ ...good, toSlot: T - 1 }, 'toSlot'],
        [{ ...good, version: 0 }, 'version'],
        [{ ...good, jobs: [firedJob('other', schedule.job, T + HOUR, false)] }, 'jobs[0].schedule'],
        [{ ...good, jobs: [firedJob('s', schedule.job, T, false)] }, 'jobs[0].schedule'],
        [{ ...good, jobs: [newJob()] }, 'jobs[0].schedule'],
        [{ ...good, when: 1 } as FireScheduleParams, 'when'],
      ]
      for (const [bad, field] of cases) {
        await assert.rejects(
          store.fireSchedule(bad),
          (error: unknown) => error instanceof ValidationError && error.field === field,
          field,
        )
      }
      assert.deepEqual(await allJobs(store), [])
      assert.equal((await scheduleOf(store, 's'))!.lastSlot, T)
    })
  })

  describe('what a job carries beside its columns', () => {
    const backoffs: JobBackoff[] = [
      { type: 'fixed', delayMs: 5000 },
      { type: 'exponential', baseMs: 100, factor: 3, maxMs: 60_000 },
      { type: 'list', delaysMs: [1000, 10_000, 60_000] },
    ]

    test('its backoff and its slot come back from claim and listJobs as enqueued', async ({ store }) => {
      const jobs: Partial<NewJob>[] = [
        ...backoffs.map((backoff) => ({ backoff })),
        { schedule: { id: 'nightly', slot: T, late: true }, uniqueKey: 'k' },
        {},
      ]
      const enqueued = await enqueueJobs(store, T, jobs)
      const listed = await Promise.all(enqueued.map((id) => getExisting(store, id)))
      assert.deepEqual(
        listed.map((job) => [job.backoff, job.schedule]),
        jobs.map((job) => [job.backoff ?? null, job.schedule ?? null]),
      )
      const claimed = await claimAt(store, T, { limit: 10 })
      assert.deepEqual(
        claimed.map((job) => [job.backoff, job.schedule]),
        jobs.map((job) => [job.backoff ?? null, job.schedule ?? null]),
      )
    })

    test('a bulk enqueue keeps each job its own backoff', async ({ store }) => {
      const jobs = Array.from({ length: 150 }, (_, i) => ({ backoff: backoffs[i % 3]! }))
      const enqueued = await enqueueJobs(store, T, jobs)
      const listed = await allJobs(store)
      assert.deepEqual(ids(listed), enqueued)
      assert.deepEqual(
        listed.map((job) => job.backoff),
        jobs.map((job) => job.backoff),
      )
      const same = await enqueueJobs(
        store,
        T,
        Array.from({ length: 70 }, () => ({ backoff: backoffs[0]! })),
      )
      assert.deepEqual((await getExisting(store, one(same.slice(-1)))).backoff, backoffs[0])
    })

    const traces: JobTraceContext[] = [
      { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
      {
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00',
        tracestate: 'rojo=00f067aa0ba902b7',
      },
    ]

    test('its trace context comes back from claim and getJob as enqueued, through a retry', async ({
      store,
    }) => {
      const jobs: Partial<NewJob>[] = [
        { trace: traces[0]! },
        { trace: traces[1]!, uniqueKey: 'k', backoff: backoffs[0]! },
        { trace: null },
        {},
      ]
      const enqueued = await enqueueJobs(store, T, jobs)
      const expected = jobs.map((job) => job.trace ?? null)
      const listed = await Promise.all(enqueued.map((id) => getExisting(store, id)))
      assert.deepEqual(
        listed.map((job) => job.trace),
        expected,
      )
      const claimed = await claimAt(store, T, { limit: 10 })
      assert.deepEqual(
        claimed.map((job) => job.trace),
        expected,
      )
      const settled = await store.settle({
        settlements: claimed.map((job) => ({
          kind: 'retry' as const,
          id: job.id,
          leaseToken: job.leaseToken,
          runAt: T,
          error: { kind: 'error' as const, message: 'again' },
        })),
        now: T,
      })
      assert.deepEqual(settled.settled, ['ok', 'ok', 'ok', 'ok'])
      const again = await claimAt(store, T + 1, { limit: 10 })
      assert.deepEqual(
        again.map((job) => [job.attempts, job.trace]),
        expected.map((trace) => [2, trace]),
      )
    })

    test("changeJobs, a dead end and an operator's retry leave a job its trace context", async ({
      store,
    }) => {
      const id = await enqueueJob(store, T, { trace: traces[1]!, delayMs: HOUR })
      const { results } = await store.changeJobs({
        changes: [{ id, priority: 5, payload: { v: 2 }, runAt: T, maxAttempts: 9 }],
        now: T,
      })
      assert.deepEqual(results, ['ok'])
      assert.deepEqual((await getExisting(store, id)).trace, traces[1])
      const [claimed] = await claimAt(store, T + 1, {}, id)
      const dead = {
        kind: 'dead' as const,
        id,
        leaseToken: claimed!.leaseToken,
        error: { kind: 'error' as const, message: 'no' },
      }
      assert.deepEqual((await store.settle({ settlements: [dead], now: T + 1 })).settled, ['ok'])
      assert.equal(await store.retry({ ids: [id], now: T + 2 }), 1)
      const [again] = await claimAt(store, T + 3, {}, id)
      assert.deepEqual(again!.trace, traces[1])
    })

    test('a bulk enqueue keeps each job its own trace context, and a debounce keeps the first one', async ({
      store,
    }) => {
      const jobs = Array.from({ length: 150 }, (_, i) => ({ trace: traces[i % 2]! }))
      await enqueueJobs(store, T, jobs)
      const shared = await enqueueJobs(
        store,
        T,
        Array.from({ length: 70 }, () => ({ trace: traces[1]! })),
      )
      assert.deepEqual(
        (await allJobs(store)).map((job) => job.trace),
        [...jobs.map((job) => job.trace), ...shared.map(() => traces[1])],
      )
      const debounced = (trace: JobTraceContext, payload: string): Partial<NewJob> => ({
        uniqueKey: 'd',
        uniqueUntil: 'started',
        debounceMs: MINUTE,
        delayMs: MINUTE,
        payload,
        trace,
      })
      const first = await enqueueJob(store, T, debounced(traces[0]!, '1'))
      assert.equal(await enqueueJob(store, T + 1, debounced(traces[1]!, '2')), first)
      const job = await getExisting(store, first)
      assert.equal(job.payload, 2)
      assert.deepEqual(job.trace, traces[0])
    })
  })
}
