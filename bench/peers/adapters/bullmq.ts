/**
 * BullMQ 6.7 with ioredis 5 (BullMQ's own choice of client when given connection options), on the
 * benchmark's own redis-server with appendonly yes and appendfsync always: every command is on
 * disk before Redis replies. Queue.add for one job, Queue.addBulk for the bulk path; one Worker
 * with `concurrency`, the rest at its defaults (completed jobs kept, as BullMQ does unless told
 * otherwise). Its 'completed' event comes after the job was moved to completed in Redis.
 */
import { Queue, Worker } from 'bullmq'
import { JOB_NAME, QUEUE_NAME, type Adapter, type Producer, type Target } from '../lib/types.js'
import { producerOf } from './shared.js'

function connection(target: Target): { host: string; port: number } {
  if (target.store !== 'redis') throw new Error(`BullMQ runs on Redis, not ${target.store}`)
  return { host: target.host, port: target.port }
}

export const adapter: Adapter = {
  product: 'bullmq',
  completion: 'durable',

  async migrate() {
    // Nothing to create: BullMQ makes its keys as it goes.
  },

  async producer(target): Promise<Producer> {
    const queue = new Queue(QUEUE_NAME, { connection: connection(target) })
    await queue.waitUntilReady()
    return producerOf({
      one: (payload) => queue.add(JOB_NAME, payload),
      many: (payloads) => queue.addBulk(payloads.map((data) => ({ name: JOB_NAME, data }))),
      close: () => queue.close(),
    })
  },

  async startWorker(target, { concurrency, hooks }) {
    const worker = new Worker(
      QUEUE_NAME,
      async () => {
        hooks.onStart()
      },
      { connection: connection(target), concurrency },
    )
    worker.on('completed', () => hooks.onCompleted())
    worker.on('error', (error) => process.stderr.write(`bullmq worker error: ${error.message}\n`))
    return {
      stop: () => worker.close(true),
    }
  },
}
