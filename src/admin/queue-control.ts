// Queue control as the `ferry pause`, `resume`, `limit`, `limits` and `retention` commands (and a dashboard)
// run it: each call checks its params before the store is touched, makes one change through the
// store's control call, and answers with the queue's settings as the change left them. The store
// keeps them and enforces them inside every claim, in every process (docs/queue-control.md).
import { assertName } from '../core/validate.js'
import { checkControlParams } from '../store/params.js'
import type {
  ControlParams,
  QueueControl,
  QueueLimitChange,
  QueueLimits,
  QueuePause,
  QueueRetention,
  QueueRetentionChange,
  Store,
} from '../store/store.js'
import { RETENTION_DEFAULTS } from '../store/kernel/retention.js'

/** A queue's settings with none set: what a queue without a record has. */
export function runningQueue(queue: string): QueueControl {
  return {
    queue,
    paused: null,
    limits: { concurrency: null, rate: null, groupConcurrency: null, groupRate: null } satisfies QueueLimits,
    retention: { completedMs: null, deadMs: null, completedCount: null, deadCount: null },
  }
}

/**
 * Pauses a queue: no worker in any process claims its jobs from the commit on, until it is
 * resumed. Enqueues go on; jobs already running finish.
 */
export async function pauseQueue(store: Store, pause: QueuePause): Promise<QueueControl> {
  return changeQueue(store, pause.queue, { pause })
}

/** Resumes a paused queue and wakes the workers waiting for it; a running queue is left as is. */
export async function resumeQueue(store: Store, { queue }: { queue: string }): Promise<QueueControl> {
  return changeQueue(store, queue, { resume: { queue } })
}

/** Sets (or with `clear`, removes) a queue's limits; limits not named stay as they are. */
export async function limitQueue(store: Store, limit: QueueLimitChange): Promise<QueueControl> {
  return changeQueue(store, limit.queue, { limit })
}

/**
 * Sets (or with `clear`, puts back the defaults of) how long a queue keeps its finished jobs;
 * settings not named stay as they are. Workers' sweeps apply it from their next batch.
 */
export async function setQueueRetention(
  store: Store,
  retention: QueueRetentionChange,
): Promise<RetentionReport> {
  return retentionReport(await changeQueue(store, retention.queue, { retention }))
}

/** A queue's retention as in force: what it keeps, and which of it is the default. */
export interface RetentionReport {
  queue: string
  /** What the queue keeps: its own settings, the defaults in place of those it has not set. */
  keeps: { [K in keyof QueueRetention]: number | null }
  /** Its own settings, each null where the default applies. */
  set: QueueRetention
}

export async function getQueueRetention(store: Store, queue: string): Promise<RetentionReport> {
  assertName(queue, 'queue', 'invalid_queue')
  const { queues } = await store.control()
  return retentionReport(queues.find((entry) => entry.queue === queue) ?? runningQueue(queue))
}

function retentionReport({ queue, retention }: QueueControl): RetentionReport {
  return {
    queue,
    keeps: {
      completedMs: retention.completedMs ?? RETENTION_DEFAULTS.completedMs,
      deadMs: retention.deadMs ?? RETENTION_DEFAULTS.deadMs,
      completedCount: retention.completedCount ?? RETENTION_DEFAULTS.completedCount,
      deadCount: retention.deadCount ?? RETENTION_DEFAULTS.deadCount,
    },
    set: retention,
  }
}

/** Every queue with a setting (paused, limited, or a retention of its own), by name. */
export async function listQueueControls(store: Store): Promise<QueueControl[]> {
  return (await store.control()).queues
}

async function changeQueue(
  store: Store,
  queue: string,
  change: Pick<ControlParams, 'pause' | 'resume' | 'limit' | 'retention'>,
): Promise<QueueControl> {
  checkControlParams(change)
  const { queues } = await store.control(change)
  return queues.find((entry) => entry.queue === queue) ?? runningQueue(queue)
}
