/**
 * Delivery to a waiter that cannot take it, on the stores that deliver (PostgreSQL and Redis): an
 * enqueue hands its job to an idle `ferry work` process that is frozen (SIGSTOP), so the handover
 * sits unread in its socket. The job must go back in line soon, well under one lease, with its
 * attempt unused (with one attempt allowed, it must still run, not end dead "lease expired"),
 * another worker runs it, and the frozen worker, thawed, must not run it too.
 */
import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'

import { createClient, type Store } from '../../src/index.js'
import { postgresUnreachableReason, tempSchema } from '../support/postgres-harness.js'
import { ownServerOptions, startOwnRedisServer } from '../support/redis-harness.js'
import { RedisStore } from '../../src/redis.js'
import { skipUnlessAvailable } from '../support/services.js'
import { waitFor } from '../support/async.js'
import { defer } from '../support/cleanup.js'
import { logRecords, REPO_ROOT, spawnFerry, WORKER_STARTED } from '../support/processes.js'
import { getJob } from '../support/store-calls.js'

const OK_HANDLERS = `${REPO_ROOT}/tests/support/handlers/ok.mjs`
/** The default lease: a frozen waiter used to cost the job all of it, and its attempt. */
const LEASE_MS = 30_000

interface Target {
  store: Store
  url: string
}

const targets: { name: string; skip: { skip?: string }; open: (t: TestContext) => Promise<Target> }[] = [
  {
    name: 'postgres',
    skip: skipUnlessAvailable(await postgresUnreachableReason()),
    async open(t) {
      const schema = tempSchema(t)
      return { store: await schema.open(), url: schema.url }
    },
  },
  {
    name: 'redis',
    skip: ownServerOptions(),
    async open(t) {
      const server = await startOwnRedisServer()
      defer(t, () => server.close())
      const store = await RedisStore.open({ url: server.url, onWarning: () => {} })
      defer(t, () => store.close())
      return { store, url: server.url }
    },
  },
]

for (const target of targets) {
  describe(`a frozen waiter on ${target.name}`, target.skip, () => {
    it('gets a job handed over, which goes back unused, runs elsewhere, and not in the waiter once thawed', async (t) => {
      const { store, url } = await target.open(t)
      const work = (): ReturnType<typeof spawnFerry> =>
        spawnFerry(t, ['--store', url, 'work', '--handlers', OK_HANDLERS, '--lease', `${LEASE_MS}ms`])
      const frozen = work()
      await frozen.waitForOutput(WORKER_STARTED)
      const frozenId = String(
        logRecords(frozen.stderr).find((record) => record.event === 'worker:started')!.workerId,
      )
      // Idle, it registered to be handed jobs; frozen, it cannot read what it is handed.
      await new Promise((resolve) => setTimeout(resolve, 500))
      frozen.child.kill('SIGSTOP')
      defer(t, () => frozen.child.kill('SIGCONT'))

      const { id } = await createClient({ store }).enqueue('ok', { n: 1 }, { maxAttempts: 1 })
      const handed = await waitFor(
        async () => {
          const job = await getJob(store, id)
          return job?.state === 'active' ? job : null
        },
        10_000,
        'the job handed to the frozen waiter',
      )
      assert.equal(handed.workerId, frozenId, 'it went to the frozen waiter')
      const handedAt = performance.now()

      const other = work()
      await other.waitForOutput(WORKER_STARTED)
      const otherPid = other.child.pid
      const done = await waitFor(
        async () => {
          const job = await getJob(store, id)
          return job?.state === 'completed' || job?.state === 'dead' ? job : null
        },
        LEASE_MS / 2,
        'the job back in line and run by the other worker, well within a lease',
      )
      t.diagnostic(
        `completed elsewhere ${Math.round(performance.now() - handedAt)} ms after it was handed over`,
      )
      assert.equal(done.state, 'completed')
      assert.equal(done.attempts, 1, 'the attempt of the handover was given back')
      assert.equal((done.result as { pid: number }).pid, otherPid)

      // Thawed, the first worker finds the job is not its own any more, and does not run it.
      frozen.child.kill('SIGCONT')
      await new Promise((resolve) => setTimeout(resolve, 1500))
      frozen.child.kill('SIGTERM')
      other.child.kill('SIGTERM')
      const [frozenExit] = await Promise.all([frozen.waitForExit(), other.waitForExit()])
      assert.match(frozenExit.stderr, /stopped \(requested\): 0 completed/, frozenExit.stderr)
      const after = (await getJob(store, id))!
      assert.equal(after.state, 'completed')
      assert.equal(after.attempts, 1)
      assert.equal((after.result as { pid: number }).pid, otherPid)
    })
  })
}
