/**
 * Waiting for a job's result (docs/events.md): subscribe to the job's events first, then read
 * the job once (it may have finished already), then wait, reading the job again on each of its
 * events. The job row is the answer; events only say when to look. It also looks every
 * RECHECK_MS, so a job removed (purge and retention write no events) or an event lost (a process
 * that died between its commit and its event) ends the wait too, never a hang.
 */
import { JobWaitError, ValidationError } from '../core/errors.js'
import type { Job, JobId } from '../core/job.js'
import { assertKnownKeys, optionKeys } from '../core/option-keys.js'
import { subscribeAtOnce } from '../store/events/subscription.js'
import type { Store } from '../store/store.js'

export interface WaitForOptions {
  /** Give up after this long (JobWaitError 'wait_timeout'). A timeout or a signal is required. */
  timeoutMs?: number
  /** Give up when it aborts (JobWaitError 'wait_aborted'). */
  signal?: AbortSignal
}

export const WAIT_FOR_OPTION_KEYS = optionKeys<WaitForOptions>({ timeoutMs: true, signal: true })

/** How often a wait reads its job even when no event came. */
const RECHECK_MS = 1000

/** Checks a wait's options: a timeout (a positive integer of ms) or a signal, or both. */
export function checkWaitForOptions(options: WaitForOptions | undefined): void {
  assertKnownKeys(options ?? {}, WAIT_FOR_OPTION_KEYS, '')
  const { timeoutMs, signal } = options ?? {}
  if (timeoutMs === undefined && signal === undefined) {
    throw new ValidationError(
      'invalid_option',
      'timeoutMs',
      'a wait needs a timeoutMs or a signal, so it cannot hang',
    )
  }
  if (timeoutMs !== undefined && (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0)) {
    throw new ValidationError(
      'invalid_option',
      'timeoutMs',
      `must be a positive integer of milliseconds (got ${String(timeoutMs)})`,
    )
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new ValidationError('invalid_option', 'signal', 'must be an AbortSignal')
  }
}

/**
 * Resolves with the job's result once it completes; rejects with JobWaitError when it ends
 * otherwise, is gone, or the timeout or signal ends the wait first.
 */
export async function waitForJob(store: Store, id: JobId, options: WaitForOptions): Promise<unknown> {
  checkWaitForOptions(options)
  const { timeoutMs, signal } = options
  if (signal?.aborted) throw aborted(id)
  let ended: JobWaitError | null = null
  let wake: () => void = () => undefined
  const end = (error: JobWaitError): void => {
    ended ??= error
    wake()
  }
  const onAbort = (): void => end(aborted(id))
  signal?.addEventListener('abort', onAbort, { once: true })
  const timer =
    timeoutMs === undefined
      ? undefined
      : setTimeout(
          () => end(new JobWaitError('wait_timeout', id, `no result within ${timeoutMs} ms`)),
          timeoutMs,
        )
  const subscription = await subscribeAtOnce(store, { ids: [id] })
  try {
    // Events only say when to read the job again: a subscription that failed leaves it to the rechecks.
    const nextEvent = () => subscription.next().catch(() => null)
    let next = nextEvent()
    for (;;) {
      if (ended !== null) throw ended
      const job = (await store.listJobs({ ids: [id] })).jobs[0]
      const settled = outcomeOf(id, job)
      if (settled !== undefined) return settled.result
      if (ended !== null) throw ended
      const tick = new Promise<'tick'>((resolve) => {
        const recheck = setTimeout(() => resolve('tick'), RECHECK_MS)
        wake = () => {
          clearTimeout(recheck)
          resolve('tick')
        }
      })
      const item = await Promise.race([next, tick])
      wake()
      // A subscription that ended (its store closed) leaves the rechecks to tell.
      if (item === null) next = new Promise(() => undefined)
      else if (item !== 'tick') next = nextEvent()
    }
  } finally {
    if (timer !== undefined) clearTimeout(timer)
    signal?.removeEventListener('abort', onAbort)
    await subscription.close()
  }
}

/** The job's result when it completed; throws when it ended otherwise or is gone; else undefined. */
function outcomeOf(id: JobId, job: Job | undefined): { result: unknown } | undefined {
  if (job === undefined) {
    throw new JobWaitError('job_removed', id, 'no such job (purged, pruned by retention, or never enqueued)')
  }
  if (job.state === 'completed') return { result: job.result }
  if (job.state !== 'dead') return undefined
  const error = job.lastError
  switch (error?.kind) {
    case 'cancelled':
      throw new JobWaitError('job_cancelled', id, 'cancelled', error)
    case 'expired':
      throw new JobWaitError('job_expired', id, 'not started by its start deadline', error)
    default:
      throw new JobWaitError('job_dead', id, `dead: ${error?.message ?? 'no error recorded'}`, error ?? null)
  }
}

function aborted(id: JobId): JobWaitError {
  return new JobWaitError('wait_aborted', id, 'the wait was aborted')
}
