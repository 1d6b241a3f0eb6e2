/**
 * On a Redis Cluster with replicas, the master that serves a namespace dies and its replica takes
 * over: a worker of that namespace follows the slot by itself (its commands and its shard-channel
 * subscription move to the new master) and runs a job enqueued afterwards, well before the 30 s
 * safety net would have looked, even when that job came before its subscription had moved (a
 * worker process frozen through the failover). The nodes run without persistence: this is about
 * staying alive, not about which acknowledged writes a failover loses (docs/backends.md,
 * Durability).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'

import { withConnection } from '../support/redis-server.js'
import type { NewJob } from '../../src/index.js'
import { RedisStore } from '../../src/redis.js'
import type { ScriptPayload } from '../support/handlers/scripted.js'
import { ownServerOptions, startOwnRedisCluster, type OwnRedisCluster } from '../support/redis-harness.js'
import { newJob } from '../support/store-harness.js'
import { sleep, waitFor } from '../support/async.js'
import { defer } from '../support/cleanup.js'
import { spawnFerry, WORKER_STARTED } from '../support/processes.js'
import { fixtureHandlers, startWorker } from '../support/workers.js'
import { getJob } from '../support/store-calls.js'

const JOB = 'failover.job'
/** A master silent this long is failed over: short, so the test takes seconds. */
const NODE_TIMEOUT_MS = 1000
/** How long a worker is left after its last job, to be sure it is waiting (subscribed) again. */
const IDLE_MS = 500

describe('RedisStore on a Redis Cluster with replicas', ownServerOptions(), () => {
  it('keeps running jobs after the master of its namespace fails over to its replica', async (t) => {
    const cluster = await startOwnRedisCluster({ masters: 3, replicas: 1, nodeTimeoutMs: NODE_TIMEOUT_MS })
    defer(t, () => cluster.close())

    const open = (): Promise<RedisStore> =>
      RedisStore.open({ url: cluster.url, cluster: true, namespace: 'failover', onWarning: () => {} })
    const store = await open()
    defer(t, () => store.close())
    const producer = await open()
    defer(t, () => producer.close())
    const completed = new Set<string>()
    const { worker } = await startWorker(t, {
      store,
      handlers: { [JOB]: async () => {} },
      queues: ['default'],
    })
    worker.on('job:completed', (job) => completed.add(job.id))

    const [before] = await producer.enqueue({ jobs: [newJob({ name: JOB })] })
    await waitFor(() => completed.has(before!.id), 5000, 'the job enqueued before the failover')

    await failOver(cluster, store.keys.channel)
    const id = await enqueueUntilAccepted(producer, newJob({ name: JOB }))
    await waitFor(() => completed.has(id), 10_000, 'the job enqueued after the failover, run by the worker')
  })

  it('runs a job enqueued on the new master while its worker was frozen through the failover', async (t) => {
    const cluster = await startOwnRedisCluster({ masters: 3, replicas: 1, nodeTimeoutMs: NODE_TIMEOUT_MS })
    defer(t, () => cluster.close())
    const namespace = 'frozen'
    const ferry = spawnFerry(t, [
      '--store',
      `${cluster.url}/?cluster=true&namespace=${namespace}`,
      'work',
      '--handlers',
      fixtureHandlers('scripted.ts'),
    ])
    await ferry.waitForOutput(WORKER_STARTED)
    const producer = await RedisStore.open({
      url: cluster.url,
      cluster: true,
      namespace,
      onWarning: () => {},
    })
    defer(t, () => producer.close())
    const completed = async (id: string): Promise<boolean> =>
      (await getJob(producer, id))?.state === 'completed'

    const job = newJob({ name: 'script', payload: JSON.stringify({ steps: [{}] } satisfies ScriptPayload) })
    const [before] = await producer.enqueue({ jobs: [job] })
    await waitFor(() => completed(before!.id), 10_000, 'the job enqueued before the failover')
    await sleep(IDLE_MS)

    // Frozen, the worker cannot follow the slot before the job is enqueued on the new master, so
    // the job's wake-up message goes to a node it is not yet subscribed to.
    ferry.child.kill('SIGSTOP')
    await failOver(cluster, producer.keys.channel)
    const id = await enqueueUntilAccepted(producer, job)
    ferry.child.kill('SIGCONT')
    await waitFor(
      () => completed(id),
      10_000,
      'the job enqueued while the worker was frozen, run once it thawed',
    )
  })
})

/** Kills the master serving `key`'s slot and waits until a replica has taken the slot over. */
async function failOver(cluster: OwnRedisCluster, key: string): Promise<void> {
  const slot = await keySlot(cluster, key)
  const oldMaster = await masterOfSlot(cluster.ports, slot)
  await cluster.kill(oldMaster)
  const survivors = cluster.ports.filter((port) => port !== oldMaster)
  const newMaster = await waitFor(
    async () => {
      const master = await masterOfSlot(survivors, slot).catch(() => null)
      return master !== null && master !== oldMaster ? master : null
    },
    20_000,
    'a replica promoted to master of the slot',
    100,
  )
  assert.notEqual(newMaster, oldMaster)
}

/**
 * Enqueues one job, again and again until the new master accepts it: the producer's own client
 * may still point at the dead node for a moment, and each failed enqueue is an error the caller
 * sees, never a silent loss.
 */
async function enqueueUntilAccepted(producer: RedisStore, job: NewJob): Promise<string> {
  return waitFor(
    async () => (await producer.enqueue({ jobs: [job] }).catch(() => null))?.[0]?.id,
    10_000,
    'an enqueue accepted by the new master',
    200,
  )
}

async function keySlot(cluster: OwnRedisCluster, key: string): Promise<number> {
  return withConnection(cluster.url, async (node) => Number(await node.call('CLUSTER', 'KEYSLOT', key)))
}

/** The port of the master serving `slot`, as the first of `ports` that answers sees it. */
async function masterOfSlot(ports: readonly number[], slot: number): Promise<number> {
  for (const port of ports) {
    try {
      const ranges = (await withConnection(nodeUrl(port), (node) => node.call('CLUSTER', 'SLOTS'))) as [
        number,
        number,
        [string, number, ...unknown[]],
      ][]
      const range = ranges.find(([first, last]) => first <= slot && slot <= last)
      if (range !== undefined) return range[2][1]
    } catch {
      // The dead node, or one not answering yet: ask the next.
    }
  }
  throw new Error(`no node answered for slot ${slot}`)
}

function nodeUrl(port: number): string {
  return `redis://127.0.0.1:${port}`
}
