/**
 * One scheduler process of the schedules chaos run: the real Worker, its `schedules` the run's
 * (config.ts, the same in every process), its handlers no-ops. It tells the supervisor over IPC
 * once its worker has started (its scheduler has loaded the schedules and set its timer), and
 * writes each fire its scheduler won to its history, so a failed run can be traced to the process
 * that fired a slot. SIGTERM stops it gracefully; the nemesis SIGKILLs it.
 *
 *   node scheduler-process.js --store <url> --history <file> --name <s1>
 * (run as built by chaos/build.ts, with an IPC channel)
 */
import { parseArgs } from 'node:util'

import { openStore, Worker } from '../../src/index.js'
import { History } from '../history.js'
import { JOB_NAME, QUEUE, SCHEDULES } from './config.js'

/** A record in a scheduler's history. Times are this host's epoch ms. */
export type SchedulerRecord =
  | { e: 'hello'; pid: number; t: number }
  | { e: 'ready'; t: number }
  /** A fire the store accepted: `at` when it was sent, `t` when it was answered. */
  | {
      e: 'fired'
      schedule: string
      slots: { slot: number; late: boolean }[]
      ids: string[]
      outcome: string
      at: number
      t: number
    }
  | { e: 'error'; message: string; t: number }
  | { e: 'stopped'; t: number }

/** The message a scheduler process sends its supervisor once its worker has started. */
export interface ReadyMessage {
  ready: true
}

const { values } = parseArgs({
  options: {
    store: { type: 'string' },
    history: { type: 'string' },
    name: { type: 'string' },
  },
})
const { store: url, history: historyPath, name } = values
if (url === undefined || historyPath === undefined || name === undefined || process.send === undefined) {
  throw new Error(
    'usage: scheduler-process.js --store <url> --history <file> --name <name> (with an IPC channel)',
  )
}

const history = new History(historyPath)
const record = (entry: SchedulerRecord): void => history.write(entry)
const store = await openStore(url)
const worker = new Worker({
  store,
  handlers: { [JOB_NAME]: () => {} },
  queues: [QUEUE],
  schedules: SCHEDULES,
  workerId: `${name}:${process.pid}`,
})
worker.on('schedule:fired', ({ schedule, slots, ids, outcome, at }) =>
  record({ e: 'fired', schedule, slots, ids, outcome, at, t: Date.now() }),
)
worker.on('worker:error', (error) => {
  record({ e: 'error', message: String(error), t: Date.now() })
  process.stderr.write(`worker error: ${String(error)}\n`)
})
process.on('SIGTERM', () => void worker.stop())
record({ e: 'hello', pid: process.pid, t: Date.now() })
await worker.start()
record({ e: 'ready', t: Date.now() })
process.send({ ready: true } satisfies ReadyMessage)
await worker.stopped
record({ e: 'stopped', t: Date.now() })
history.close()
await store.close()
// The IPC channel would keep the process alive.
process.disconnect()
