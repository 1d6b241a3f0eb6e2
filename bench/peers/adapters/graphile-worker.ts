/**
 * graphile-worker 0.17 at its defaults (pool of 10, LISTEN/NOTIFY plus a 2 s poll, no local
 * queue, no batched completion delay). WorkerUtils.addJob for one job, WorkerUtils.addJobs (its
 * bulk path, one statement) for many; run() with `concurrency` and a task list. A completed job
 * is deleted; its 'job:complete' event comes while that DELETE is still on its way, so the jobs
 * count as done once the table holds none of them.
 */
import { Logger, makeWorkerUtils, run, runMigrations } from 'graphile-worker'
import { JOB_NAME, type Adapter, type Producer } from '../lib/types.js'
import { postgresCounter } from './pg-client.js'
import { producerOf, storeUrl } from './shared.js'

/** The default logger writes every job to stdout. */
const logger = new Logger(() => () => {})

export const adapter: Adapter = {
  product: 'graphile-worker',
  completion: 'early',

  async migrate(target) {
    await runMigrations({ connectionString: storeUrl(target, 'postgres'), logger })
  },

  async producer(target): Promise<Producer> {
    const utils = await makeWorkerUtils({ connectionString: storeUrl(target, 'postgres'), logger })
    return producerOf({
      one: (payload) => utils.addJob(JOB_NAME, payload),
      many: (payloads) => utils.addJobs(payloads.map((payload) => ({ identifier: JOB_NAME, payload }))),
      close: async () => utils.release(),
    })
  },

  async startWorker(target, { concurrency, hooks }) {
    const runner = await run({
      connectionString: storeUrl(target, 'postgres'),
      concurrency,
      noHandleSignals: true,
      logger,
      taskList: {
        [JOB_NAME]: async () => {
          hooks.onStart()
        },
      },
    })
    runner.events.on('job:complete', ({ error }) => {
      if (error === undefined || error === null) hooks.onCompleted()
    })
    return { stop: () => runner.stop() }
  },

  completedCounter: (target) =>
    postgresCounter(target, (enqueued) => ({
      text: 'SELECT $1::bigint - count(*) AS n FROM graphile_worker._private_jobs',
      values: [enqueued],
    })),
}
