/**
 * The publisher of job events: a wrapStore hook (the instrumentation seam) that, after each call
 * that moved jobs, appends what moved to the store's event log. No backend's transition code
 * knows of events; each store only keeps the log (EventChannel).
 *
 * While nobody subscribes it asks the channel once per such call and writes nothing. With a
 * subscriber it appends after the call's own commit (and after the caller has its result), so an
 * event never speaks of a change that did not commit; a process that dies between the two leaves the change without its event, which
 * is why events are hints and the job row the truth (docs/events.md).
 */
import type { ClaimedJob, Job, JobError, JobId } from '../../core/job.js'
import type { JobReport } from '../../core/progress.js'
import type { Settlement } from '../../core/outcome.js'
import type { RenewLease, SettleResult, Store } from '../store.js'
import { wrapStore, type StoreCall } from '../wrap-store.js'
import { eventChannelOf, type EventChannel, type NewJobEvent } from './job-event.js'

const PUBLISHING = Symbol.for('ferry.publishingJobEvents')

/** Jobs this process claimed and has not settled, remembered so a settle's events need no read. */
const ACTIVE_JOBS_MAX = 100_000

interface JobName {
  queue: string
  name: string
}

/**
 * The store, publishing job events when it keeps them (SQLite, PostgreSQL, Redis); the store
 * itself when it does not or already publishes. Worker, Client and openStore apply it, so every
 * Ferry process that moves jobs tells subscribers.
 */
export function publishJobEvents(store: Store): Store {
  // Not a store at all: left for the caller's own checks to refuse.
  if (typeof store !== 'object' || store === null) return store
  if ((store as Partial<Record<typeof PUBLISHING, true>>)[PUBLISHING]) return store
  const channel = eventChannelOf(store)
  if (channel === null) return store
  const publisher = new EventPublisher(store, channel)
  const wrapped = wrapStore(store, { around: (call) => publisher.around(call) })
  Object.defineProperty(wrapped, PUBLISHING, { value: true })
  return wrapped
}

class EventPublisher {
  private readonly active = new Map<JobId, JobName>()
  /** The events of the calls so far, written one call after another. */
  private publishing: Promise<void> = Promise.resolve()
  private warned = false

  constructor(
    private readonly store: Store,
    private readonly channel: EventChannel,
  ) {}

  async around(call: StoreCall): Promise<unknown> {
    // Closing waits for the events still being written, so a short-lived process (a `ferry`
    // command) does not exit before them.
    if (call.method === 'close') {
      await this.publishing
      return call.next()
    }
    const startedAt = Date.now()
    const result: unknown = await call.next()
    // Written after the caller has its result, in call order: the hot path waits for no event.
    this.publishing = this.publishing.then(() => this.publish(call, result, startedAt))
    return result
  }

  private async publish(call: StoreCall, result: unknown, startedAt: number): Promise<void> {
    try {
      const events = await this.eventsOf(call, result, startedAt)
      if (events.length > 0) await this.channel.append(events)
    } catch (error) {
      // The call committed: its caller has its result. A lost event is what events may be.
      if (!this.warned) {
        this.warned = true
        process.emitWarning(`ferry: a job event could not be written: ${String(error)}`, 'FerryWarning')
      }
    }
  }

  /** The events of one call, reading jobs only when someone subscribes. */
  private async eventsOf(call: StoreCall, result: unknown, startedAt: number): Promise<NewJobEvent[]> {
    const at = Date.now()
    switch (call.method) {
      case 'claim':
        return this.started(result as ClaimedJob[], at)
      case 'waitForWork':
        return this.started((result as Awaited<ReturnType<Store['waitForWork']>>).jobs, at)
      case 'enqueue': {
        const results = result as Awaited<ReturnType<Store['enqueue']>>
        if (!(await this.channel.hasSubscribers())) return []
        return call.params.jobs.flatMap((job, i): NewJobEvent[] => {
          const done = results[i]
          if (done === undefined || !done.created) return []
          const runAt = job.runAt ?? at + job.delayMs
          return [{ type: 'enqueued', id: done.id, queue: job.queue, name: job.name, at, runAt }]
        })
      }
      case 'settle':
        return this.settled(call.params, result as Awaited<ReturnType<Store['settle']>>, at)
      case 'renew':
        return this.progressed(call.params.leases, result as SettleResult[], at)
      case 'fireSchedule': {
        const fired = result as Awaited<ReturnType<Store['fireSchedule']>>
        if (fired.outcome !== 'fired' || !(await this.channel.hasSubscribers())) return []
        return (await this.jobs(fired.ids)).map((job) => ({
          ...eventOf('enqueued', job, at),
          runAt: job.runAt,
        }))
      }
      case 'cancel': {
        if ((result as number) === 0 || !(await this.channel.hasSubscribers())) return []
        const jobs = await this.jobs(call.params.ids)
        return jobs
          .filter(
            (job) =>
              job.state === 'dead' &&
              job.lastError?.kind === 'cancelled' &&
              (job.finishedAt ?? 0) >= startedAt,
          )
          .map((job) => ({ ...eventOf('cancelled', job, at), error: job.lastError as JobError }))
      }
      case 'retry': {
        const ids = call.params.ids
        if (ids === undefined || (result as number) === 0 || !(await this.channel.hasSubscribers())) return []
        const jobs = await this.jobs(ids)
        return jobs
          .filter((job) => job.state === 'ready' || job.state === 'scheduled')
          .map((job) => eventOf('retried', job, at))
      }
      case 'recoverExpired': {
        const { retried, dead, expired } = result as Awaited<ReturnType<Store['recoverExpired']>>
        for (const id of [...retried, ...dead]) this.active.delete(id)
        if (retried.length + dead.length + expired.length === 0 || !(await this.channel.hasSubscribers()))
          return []
        const jobs = await this.jobs([...retried, ...dead, ...expired])
        return jobs.flatMap((job): NewJobEvent[] => {
          const error = job.lastError ?? undefined
          if (job.state === 'dead') return [{ ...eventOf('dead', job, at), error }]
          // Back in line: a delivered job its waiter never took (attempt unused) or a lease that ran out.
          if (error?.kind !== 'lease_expired') return []
          return [{ ...eventOf('failed', job, at), error, runAt: job.runAt }]
        })
      }
      default:
        return []
    }
  }

  private async started(jobs: readonly ClaimedJob[], at: number): Promise<NewJobEvent[]> {
    if (jobs.length === 0) return []
    if (this.active.size + jobs.length > ACTIVE_JOBS_MAX) this.active.clear()
    for (const job of jobs) this.active.set(job.id, { queue: job.queue, name: job.name })
    if (!(await this.channel.hasSubscribers())) return []
    return jobs.map((job) => ({ ...eventOf('started', job, at), attempt: job.attempts }))
  }

  private async settled(
    params: Parameters<Store['settle']>[0],
    result: Awaited<ReturnType<Store['settle']>>,
    at: number,
  ): Promise<NewJobEvent[]> {
    const settled = params.settlements.filter((_, i) => result.settled[i] === 'ok')
    const names = new Map<JobId, JobName | undefined>()
    for (const settlement of params.settlements) {
      names.set(settlement.id, this.active.get(settlement.id))
      this.active.delete(settlement.id)
    }
    const started = await this.started(result.claimed, at)
    if (settled.length === 0 || !(await this.channel.hasSubscribers())) return started

    // A job settled here that this process did not claim (a delivery handed over elsewhere): read.
    await this.readNames(
      settled.map((s) => s.id),
      names,
    )
    const events = settled.flatMap((settlement): NewJobEvent[] => {
      const job = names.get(settlement.id)
      if (job === undefined) return []
      const base = { id: settlement.id, queue: job.queue, name: job.name, at }
      // A last progress report rides on the settlement: told before the outcome, as it came first.
      const progress = progressEventOf(settlement.report, base)
      const outcome = outcomeEventOf(settlement, base)
      return progress === null ? [outcome] : [progress, outcome]
    })
    return [...events, ...started]
  }

  /** The progress events of a renewal: a report its renewal took, with its lease. */
  private async progressed(
    leases: readonly RenewLease[],
    result: readonly SettleResult[],
    at: number,
  ): Promise<NewJobEvent[]> {
    const reported = leases.filter((lease, i) => lease.report?.progress !== undefined && result[i] === 'ok')
    if (reported.length === 0 || !(await this.channel.hasSubscribers())) return []
    const names = new Map<JobId, JobName | undefined>(
      reported.map((lease) => [lease.id, this.active.get(lease.id)]),
    )
    // Jobs this process did not claim (another instance of the store renewed them): read.
    await this.readNames(
      reported.map((lease) => lease.id),
      names,
    )
    return reported.flatMap((lease): NewJobEvent[] => {
      const job = names.get(lease.id)
      if (job === undefined) return []
      const event = progressEventOf(lease.report, { id: lease.id, queue: job.queue, name: job.name, at })
      return event === null ? [] : [event]
    })
  }

  /** Fills in, from the store, the names of these jobs that `names` does not know. */
  private async readNames(ids: readonly JobId[], names: Map<JobId, JobName | undefined>): Promise<void> {
    const unknown = ids.filter((id) => names.get(id) === undefined)
    if (unknown.length > 0) for (const job of await this.jobs(unknown)) names.set(job.id, job)
  }

  private async jobs(ids: readonly JobId[]): Promise<Job[]> {
    return (await this.store.listJobs({ ids })).jobs
  }
}

type EventBase = Pick<NewJobEvent, 'id' | 'queue' | 'name' | 'at'>

/** A report's progress as an event (its JSON text parsed back), or null when it has none. */
function progressEventOf(report: JobReport | undefined, base: EventBase): NewJobEvent | null {
  if (report?.progress === undefined) return null
  return { ...base, type: 'progress', progress: JSON.parse(report.progress) as unknown }
}

function outcomeEventOf(settlement: Settlement, base: EventBase): NewJobEvent {
  switch (settlement.kind) {
    case 'completed':
      return { ...base, type: 'completed', result: settlement.result ?? null }
    case 'retry':
      return { ...base, type: 'failed', error: settlement.error, runAt: settlement.runAt }
    case 'dead':
      return { ...base, type: 'dead', error: settlement.error }
    case 'snoozed':
      return { ...base, type: 'snoozed', runAt: settlement.runAt }
  }
}

function eventOf(type: NewJobEvent['type'], job: Job, at: number): NewJobEvent {
  return { type, id: job.id, queue: job.queue, name: job.name, at }
}
