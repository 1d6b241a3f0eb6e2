import { FerryError } from '../../../core/errors.js'
import { serializePayload } from '../../../core/payload.js'
import type { ClaimedJob } from '../../../core/job.js'
import { monotonicMs } from '../../../core/monotonic.js'
import { AttemptAbort, type ExecutionOutcome } from '../executor.js'
import { InlineExecutor } from '../inline.js'
import {
  loadFailedMessage,
  logMessage,
  outcomeMessage,
  progressMessage,
  readyMessage,
  withdrawnMessage,
  type ChildMessage,
  type ParentMessage,
} from './protocol.js'
import { recordStderr } from './stderr-tail.js'

/** How a child talks to its parent: the IPC channel of a process, or a thread's parentPort. */
export interface ChildTransport {
  /**
   * Throws when the message cannot be serialized. `sent` runs once the message has left: the
   * parent receives it even if the child dies next.
   */
  send(message: ChildMessage, sent?: () => void): void
  onMessage(listener: (message: ParentMessage) => void): void
  /** Stops listening, so the child ends once nothing else keeps its event loop alive. */
  close(): void
  /** The figure the parent's memory limit applies to. */
  memoryBytes(): number
}

/**
 * The loop inside a child: load the handler module once, then run one attempt at a time through
 * an InlineExecutor, so a handler's snooze, permanentFailure and throws mean exactly what they
 * mean inline. What the child cannot survive (exit, signals, running out of memory) the parent
 * sees as the child's exit. Jobs handed ahead wait in a queue; the next one starts only once the
 * previous outcome has left, so the parent always knows which job a crash belongs to.
 */
export function runChild(transport: ChildTransport): void {
  let executor: InlineExecutor | null = null
  let running: { jobId: string; abort: AttemptAbort } | null = null
  /** From a job's start until its outcome has left. */
  let busy = false
  const queue: { job: ClaimedJob; startBy?: number }[] = []
  let reportMemory = false
  const stderr = recordStderr()

  const load = async (handlers: string): Promise<void> => {
    const loading = new InlineExecutor(new URL(handlers))
    try {
      await loading.start()
    } catch (error) {
      transport.send(loadFailedMessage(error))
      transport.close()
      return
    }
    executor = loading
    transport.send(readyMessage(loading.jobNames))
  }

  const startNext = (): void => {
    if (busy || queue.length === 0) return
    busy = true
    void run(queue.shift()!.job)
  }

  const finished = (): void => {
    busy = false
    startNext()
  }

  const run = async (job: ClaimedJob): Promise<void> => {
    if (executor === null) throw new FerryError('invalid_option', 'a job arrived before the handlers loaded')
    const abort = new AttemptAbort()
    running = { jobId: job.id, abort }
    stderr.reset()
    const outcome = await executor.run({
      job,
      abort,
      report: {
        progress: (json) => transport.send(progressMessage(job.id, json)),
        log: (line) => transport.send(logMessage(job.id, line)),
      },
    })
    running = null
    const stderrTail = stderr.text()
    if ((outcome.kind === 'failed' || outcome.kind === 'permanent') && stderrTail !== '') {
      outcome.error.stderrTail = stderrTail
    }
    // Before the outcome leaves: the parent takes a job that waited here as started once it has
    // that outcome, unless the job came back first.
    if (queue.length > 0) {
      const now = monotonicMs()
      withdraw(({ startBy }) => startBy !== undefined && now > startBy)
    }
    reply(job.id, outcome)
  }

  const reply = (jobId: string, outcome: ExecutionOutcome): void => {
    const memoryBytes = reportMemory ? transport.memoryBytes() : null
    try {
      transport.send(outcomeMessage(jobId, storableResult(outcome), memoryBytes), finished)
      return
    } catch (error) {
      // The result (or a thrown value's detail) cannot cross to the parent: a BigInt, a function,
      // a cycle. Retrying would give the same result, so the job ends with the reason.
      const reason = `the handler completed but its result cannot be sent to the worker: ${(error as Error).message}`
      const permanent: ExecutionOutcome = { kind: 'permanent', error: { kind: 'permanent', message: reason } }
      transport.send(outcomeMessage(jobId, permanent, memoryBytes), finished)
    }
  }

  /** Gives back the waiting jobs that have not started and match. */
  const withdraw = (matches: (waiting: (typeof queue)[number]) => boolean): void => {
    for (let i = queue.length - 1; i >= 0; i--) {
      const waiting = queue[i]!
      if (!matches(waiting)) continue
      queue.splice(i, 1)
      transport.send(withdrawnMessage(waiting.job.id))
    }
  }

  transport.onMessage((message) => {
    switch (message.type) {
      case 'load':
        reportMemory = message.reportMemory
        void load(message.handlers)
        break
      case 'run':
        queue.push(message)
        startNext()
        break
      case 'abort':
        if (running?.jobId !== message.jobId) break
        running.abort.abort(new Error(message.reason))
        // The parent retires a child whose handler was aborted: what waits here runs elsewhere.
        withdraw(() => true)
        break
      case 'withdraw':
        withdraw(({ job }) => job.id === message.jobId)
        break
      case 'exit':
        transport.close()
        break
    }
  })
}

/**
 * A completed outcome whose result the store could not take anyway (not JSON, nested past the
 * depth limit) ends as the worker would end it, here, before it crosses to the parent: a thread's
 * structured clone of a result 5,000 levels deep was lost on the way, leaving its job active.
 */
function storableResult(outcome: ExecutionOutcome): ExecutionOutcome {
  if (outcome.kind !== 'completed' || outcome.result === undefined) return outcome
  try {
    serializePayload(outcome.result, 'result')
    return outcome
  } catch (error) {
    const message = `the handler completed but its result cannot be stored: ${(error as Error).message}`
    return { kind: 'permanent', error: { kind: 'permanent', message } }
  }
}
