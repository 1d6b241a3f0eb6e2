// Queue control as the `ferry pause`, `resume`, `limit` and `limits` commands (and a dashboard)
// run it: each call checks its params before the store is touched, makes one change through the
// store's control call, and answers with the queue's settings as the change left them. The store
// keeps them and enforces them inside every claim, in every process (docs/queue-control.md).
import { checkControlParams } from '../store/params.js'
import type {
  ControlParams,
  QueueControl,
  QueueLimitChange,
  QueueLimits,
  QueuePause,
  Store,
} from '../store/store.js'

/** A queue's settings with none set: what a queue without a record has. */
export function runningQueue(queue: string): QueueControl {
  return {
    queue,
    paused: null,
    limits: { concurrency: null, rate: null, groupConcurrency: null, groupRate: null } satisfies QueueLimits,
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

/** Every queue with a setting (paused, or limited), by name. */
export async function listQueueControls(store: Store): Promise<QueueControl[]> {
  return (await store.control()).queues
}

async function changeQueue(
  store: Store,
  queue: string,
  change: Pick<ControlParams, 'pause' | 'resume' | 'limit'>,
): Promise<QueueControl> {
  checkControlParams(change)
  const { queues } = await store.control(change)
  return queues.find((entry) => entry.queue === queue) ?? runningQueue(queue)
}
