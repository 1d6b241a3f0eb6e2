import { FerryError } from '../../../core/errors.js'
import type { ClaimedJob } from '../../../core/job.js'
import { AttemptAbort, type ExecutionOutcome } from '../executor.js'
import { InlineExecutor } from '../inline.js'
import type { ChildMessage, ParentMessage } from './protocol.js'
import { recordStderr } from './stderr-tail.js'

/** How a child talks to its parent: the IPC channel of a process, or a thread's parentPort. */
export interface ChildTransport {
  send(message: ChildMessage): void
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
 * sees as the child's exit.
 */
export function runChild(transport: ChildTransport): void {
  let executor: InlineExecutor | null = null
  let running: { jobId: string; abort: AttemptAbort } | null = null
  let reportMemory = false
  const stderr = recordStderr()

  const load = async (handlers: string): Promise<void> => {
    const loading = new InlineExecutor(new URL(handlers))
    try {
      await loading.start()
    } catch (error) {
      transport.send({ type: 'load-failed', message: error instanceof Error ? error.message : String(error) })
      transport.close()
      return
    }
    executor = loading
    transport.send({ type: 'ready', jobNames: [...loading.jobNames] })
  }

  const run = async (job: ClaimedJob): Promise<void> => {
    if (executor === null) throw new FerryError('invalid_option', 'a job arrived before the handlers loaded')
    const abort = new AttemptAbort()
    running = { jobId: job.id, abort }
    stderr.reset()
    const outcome = await executor.run({ job, abort })
    running = null
    const stderrTail = stderr.text()
    if ((outcome.kind === 'failed' || outcome.kind === 'permanent') && stderrTail !== '') {
      outcome.error.stderrTail = stderrTail
    }
    reply(job.id, outcome)
  }

  const reply = (jobId: string, outcome: ExecutionOutcome): void => {
    try {
      transport.send({
        type: 'outcome',
        jobId,
        outcome,
        memoryBytes: reportMemory ? transport.memoryBytes() : null,
      })
    } catch (error) {
      // The result (or a thrown value's detail) cannot cross to the parent: a BigInt, a function,
      // a cycle. Retrying would give the same result, so the job ends with the reason.
      const message = `the handler completed but its result cannot be sent to the worker: ${(error as Error).message}`
      const unsendable: ExecutionOutcome = { kind: 'permanent', error: { kind: 'permanent', message } }
      transport.send({
        type: 'outcome',
        jobId,
        outcome: unsendable,
        memoryBytes: reportMemory ? transport.memoryBytes() : null,
      })
    }
  }

  transport.onMessage((message) => {
    switch (message.type) {
      case 'load':
        reportMemory = message.reportMemory
        void load(message.handlers)
        break
      case 'run':
        void run(message.job)
        break
      case 'abort':
        if (running?.jobId === message.jobId) running.abort.abort(new Error(message.reason))
        break
      case 'exit':
        transport.close()
        break
    }
  })
}
