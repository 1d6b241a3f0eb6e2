/**
 * plainjob 0.0.14 on better-sqlite3 (the build Ferry uses). defineQueue sets synchronous=NORMAL
 * (1) on its connection; the durable setting, FULL, is set right after it, on every connection.
 * queue.add is one INSERT (a commit), addMany one transaction. A plainjob worker runs one job at
 * a time and polls every second (its default) when it finds none: concurrency N is N workers
 * (defineWorker) in the process, on one queue. Its calls are synchronous, so they take turns on
 * the event loop. onCompleted comes after markJobAsDone's commit.
 */
import Database from 'better-sqlite3'
import { better, defineQueue, defineWorker, type Logger, type Queue } from 'plainjob'
import { JOB_NAME, type Adapter, type Producer, type Target } from '../lib/types.js'
import { producerOf, storePath } from './shared.js'

/** plainjob logs each job at debug level to the console by default, which is stdout. */
const SILENT: Logger = { error() {}, warn() {}, info() {}, debug() {} }

function openQueue(target: Target): Queue {
  const db = new Database(storePath(target))
  const queue = defineQueue({ connection: better(db), logger: SILENT })
  db.pragma('synchronous = FULL')
  const level = db.pragma('synchronous', { simple: true })
  if (level !== 2) throw new Error(`synchronous is ${String(level)}, not FULL (2)`)
  return queue
}

export const adapter: Adapter = {
  product: 'plainjob',
  completion: 'durable',

  async migrate(target) {
    openQueue(target).close()
  },

  async producer(target): Promise<Producer> {
    const queue = openQueue(target)
    return producerOf({
      one: async (payload) => queue.add(JOB_NAME, payload),
      many: async (payloads) => queue.addMany(JOB_NAME, payloads),
      close: async () => queue.close(),
    })
  },

  async startWorker(target, { concurrency, hooks }) {
    const queue = openQueue(target)
    const workers = Array.from({ length: concurrency }, () =>
      defineWorker(
        JOB_NAME,
        async () => {
          hooks.onStart()
        },
        { queue, logger: SILENT, onCompleted: () => hooks.onCompleted() },
      ),
    )
    const loops = workers.map((worker) => worker.start())
    return {
      async stop() {
        await Promise.all(workers.map((worker) => worker.stop()))
        await Promise.allSettled(loops)
        queue.close()
      },
    }
  },
}
