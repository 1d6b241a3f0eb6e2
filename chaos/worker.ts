/**
 * One chaos worker process: a Worker (inline strategy, the chaos handler module from its own
 * configuration) over a recording store (recording-store.ts), so its history holds every lease fact the store gave it.
 * SIGTERM stops it gracefully; the nemesis SIGKILLs and SIGSTOPs it.
 *
 *   node worker.js --store <url> --history <file> --name <w1> --handlers <module>
 * (run as built by chaos/build.ts)
 */
import { parseArgs } from 'node:util'

import { openStore, Worker } from '../src/index.js'
import { LEASE_MS, QUEUES, RECOVER_INTERVAL_MS, WORKER_CONCURRENCY, WORKER_PREFETCH } from './config.js'
import { History } from './history.js'
import { recordingStore, type WorkerRecord } from './recording-store.js'

const { values } = parseArgs({
  options: {
    store: { type: 'string' },
    history: { type: 'string' },
    name: { type: 'string' },
    handlers: { type: 'string' },
  },
})
const { store: url, history: historyPath, name, handlers } = values
if (url === undefined || historyPath === undefined || name === undefined || handlers === undefined) {
  throw new Error('usage: worker.js --store <url> --history <file> --name <name> --handlers <module>')
}

const history = new History(historyPath)
const record = (entry: WorkerRecord): void => history.write(entry)
const store = await openStore(url)
const worker = new Worker({
  store: recordingStore(store, history),
  handlers,
  queues: [...QUEUES],
  concurrency: WORKER_CONCURRENCY,
  prefetch: WORKER_PREFETCH,
  leaseMs: LEASE_MS,
  recoverIntervalMs: RECOVER_INTERVAL_MS,
  workerId: `${name}:${process.pid}`,
})
worker.on('job:lease-lost', (job) => {
  // Also emitted after a settlement came back lease_lost: that one is in the history already.
  record({ e: 'lost', id: job.id, token: job.leaseToken, t: Date.now() })
})
worker.on('worker:error', (error) => process.stderr.write(`worker error: ${String(error)}\n`))
process.on('SIGTERM', () => void worker.stop())
record({ e: 'hello', pid: process.pid, workerId: worker.workerId, t: Date.now() })
await worker.start()
await worker.stopped
record({ e: 'stopped', t: Date.now() })
history.close()
await store.close()
