/**
 * pg-boss 10.4 at its defaults: boss.start() (which installs or checks its schema, and runs its
 * maintenance and cron monitoring), a queue made with createQueue (v10 needs one), boss.send for
 * one job and boss.insert (one statement) for many. pg-boss 10 has no concurrency option: a
 * worker is a work() call, which fetches batchSize (default 1) jobs, runs the handler, and then
 * waits out its polling interval (default 2 s) before fetching again, whether or not it found
 * jobs. Concurrency N is N work() calls. It completes jobs in the background, after the handler,
 * and emits nothing per job: the jobs count as done once its table holds them completed.
 * A second row polls at 0.5 s, the least pg-boss accepts.
 */
import PgBoss from 'pg-boss'
import { PG_BOSS_FAST_POLL, QUEUE_NAME, type Adapter, type Producer, type Target } from '../lib/types.js'
import { postgresCounter } from './pg-client.js'
import { producerOf, storeUrl } from './shared.js'

async function startBoss(target: Target): Promise<PgBoss> {
  const boss = new PgBoss({ connectionString: storeUrl(target, 'postgres') })
  boss.on('error', (error) => process.stderr.write(`pg-boss error: ${error.message}\n`))
  await boss.start()
  return boss
}

async function stopBoss(boss: PgBoss): Promise<void> {
  await boss.stop({ graceful: false, wait: true })
}

export const adapter: Adapter = {
  product: 'pg-boss',
  completion: 'none',

  async migrate(target) {
    const boss = await startBoss(target)
    await boss.createQueue(QUEUE_NAME)
    await stopBoss(boss)
  },

  async producer(target): Promise<Producer> {
    const boss = await startBoss(target)
    return producerOf({
      one: (payload) => boss.send(QUEUE_NAME, payload),
      many: (payloads) => boss.insert(payloads.map((data) => ({ name: QUEUE_NAME, data }))),
      close: () => stopBoss(boss),
    })
  },

  async startWorker(target, { concurrency, variant, hooks }) {
    const boss = await startBoss(target)
    const options = variant === PG_BOSS_FAST_POLL.id ? { pollingIntervalSeconds: 0.5 } : {}
    for (let i = 0; i < concurrency; i++) {
      await boss.work(QUEUE_NAME, options, async (jobs) => {
        for (let j = 0; j < jobs.length; j++) hooks.onStart()
      })
    }
    return { stop: () => stopBoss(boss) }
  },

  completedCounter: (target) =>
    postgresCounter(target, () => ({
      text: `SELECT count(*) AS n FROM pgboss.job WHERE name = $1 AND state = 'completed'`,
      values: [QUEUE_NAME],
    })),

  // At one job per worker per poll, 2,000 jobs would take over half an hour: its rate is what it
  // completes within this window.
  processWindowSeconds: (_variant, quick) => (quick ? 3 : 10),
}
