import type { Command } from 'commander'
import { withStore } from '../../admin/with-store.js'
import { createClient, type JobSpec } from '../../client/client.js'
import { Worker } from '../../worker/worker.js'
import demoJobs from '../demo-jobs.js'
import { storeForJobs, storeUrl } from '../open.js'

const QUEUES = ['demo.critical', 'demo.default', 'demo.low'] as const
type Jobs = typeof demoJobs

/** Jobs per queue, in the order the demo enqueues them: the low queue first, to show it waits. */
function demoBatch(): JobSpec<Jobs>[] {
  const jobs: JobSpec<Jobs>[] = []
  for (let i = 0; i < 150; i++) {
    jobs.push({ name: 'demo.resize-image', payload: { width: 100 + i }, options: { queue: 'demo.low' } })
  }
  jobs.push({
    name: 'demo.build-report',
    payload: { template: 'q3-summary' },
    options: { queue: 'demo.low', maxAttempts: 3 },
  })
  for (let i = 0; i < 110; i++) {
    jobs.push({
      name: 'demo.send-email',
      payload: { to: `user${i}@example.com` },
      options: { queue: 'demo.default' },
    })
  }
  for (let i = 0; i < 10; i++) {
    jobs.push({
      name: 'demo.call-webhook',
      payload: { url: `https://hooks.example.com/${i}` },
      options: { queue: 'demo.default' },
    })
  }
  for (let i = 0; i < 30; i++) {
    // Priority within the queue: the larger charges first.
    jobs.push({
      name: 'demo.charge-card',
      payload: { amountCents: 100 * (i + 1) },
      options: { queue: 'demo.critical', priority: i },
    })
  }
  return jobs
}

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('enqueue a few hundred jobs on three queues and work them, showing progress live')
    .option('--concurrency <n>', 'jobs run at once', '8')
    .action(async (flags: { concurrency: string }) => {
      await withStore(storeForJobs(program), async (store) => {
        const batch = demoBatch()
        const enqueued = await createClient<Jobs>({ store }).enqueueMany(batch)
        const pending = new Map(enqueued.map(({ id }, i) => [id, batch[i]!.options!.queue!]))
        const total = new Map(QUEUES.map((queue) => [queue, 0]))
        const done = new Map(QUEUES.map((queue) => [queue, 0]))
        for (const queue of pending.values())
          total.set(queue as (typeof QUEUES)[number], total.get(queue as never)! + 1)
        process.stdout.write(
          `Enqueued ${batch.length} jobs in ${storeUrl(program)}, each durable before this line.\n`,
        )
        process.stdout.write(`Working queues ${QUEUES.join(' > ')} in that order of precedence…\n`)

        const worker = new Worker({
          store,
          handlers: demoJobs,
          queues: [...QUEUES],
          concurrency: Number(flags.concurrency),
          backoff: { baseMs: 200, maxMs: 400 },
        })
        const progress = new Progress(QUEUES, total, done)
        let retries = 0
        let dead = 0
        const finish = (id: string): void => {
          const queue = pending.get(id) as (typeof QUEUES)[number] | undefined
          if (queue === undefined) return // not one of this demo's jobs
          pending.delete(id)
          done.set(queue, done.get(queue)! + 1)
          progress.update(retries, dead)
          if (pending.size === 0) void worker.stop()
        }
        worker.on('job:completed', (job) => finish(job.id))
        worker.on('job:dead', (job, error) => {
          dead++
          progress.note(`job ${job.id} (${job.name}) is dead: ${error.message}`)
          finish(job.id)
        })
        worker.on('job:failed', (job, error) => {
          retries++
          progress.note(`job ${job.id} (${job.name}) failed, will retry: ${error.message}`)
        })
        const started = Date.now()
        await worker.start()
        await worker.stopped
        progress.update(retries, dead, true)
        const seconds = (Date.now() - started) / 1000
        process.stdout.write(
          `Done in ${seconds.toFixed(2)} s: ${batch.length - dead} completed (${retries} after a retry), ${dead} dead.\n` +
            `Look around: npx ferry stats, npx ferry jobs --state dead, npx ferry jobs show <id>.\n`,
        )
      })
    })
}

/** One status line, rewritten in place on a terminal; a line every half second otherwise. */
class Progress {
  private readonly tty = process.stdout.isTTY === true
  private lastPrintAt = 0

  constructor(
    private readonly queues: readonly string[],
    private readonly total: Map<string, number>,
    private readonly done: Map<string, number>,
  ) {}

  update(retries: number, dead: number, final = false): void {
    const now = Date.now()
    if (!final && now - this.lastPrintAt < (this.tty ? 50 : 500)) return
    this.lastPrintAt = now
    const parts = this.queues.map((queue) => `${queue} ${this.done.get(queue)}/${this.total.get(queue)}`)
    const line = `${parts.join('   ')}   retried ${retries}, dead ${dead}`
    if (this.tty) process.stdout.write(`\r\x1b[2K${line}${final ? '\n' : ''}`)
    else process.stdout.write(`${line}\n`)
  }

  note(text: string): void {
    if (this.tty) process.stdout.write(`\r\x1b[2K${text}\n`)
    else process.stdout.write(`${text}\n`)
  }
}
