/**
 * One chaos producer process. It enqueues its own sequence of jobs, key `<name>-<i>`, ENQUEUES_IN_FLIGHT at a
 * time until `--until`, and writes each acknowledgement only after the enqueue resolved. A
 * restarted producer reads what its earlier incarnations acknowledged, goes on after the last,
 * and first re-sends the last RESEND_COUNT keys: the store must answer with the same jobs.
 *
 *   node producer.js --store <url> --dir <dir> --name p1 --incarnation 2 --until <ms>  --seed N
 * (run as built by chaos/build.ts)
 */
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'

import { createClient, openStore } from '../src/index.js'
import { chaosJob, ENQUEUE_INTERVAL_MS, ENQUEUES_IN_FLIGHT, JOB_NAME, RESEND_COUNT } from './config.js'
import { History, historyFiles, readHistory } from './history.js'

export type ProducerRecord =
  | { e: 'hello'; pid: number; from: number; t: number }
  | { e: 'send'; key: string; i: number; t: number }
  | { e: 'ack'; key: string; i: number; id: string; created: boolean; t: number }
  | { e: 'done'; t: number }

const { values } = parseArgs({
  options: {
    store: { type: 'string' },
    dir: { type: 'string' },
    name: { type: 'string' },
    incarnation: { type: 'string' },
    until: { type: 'string' },
    seed: { type: 'string' },
  },
})
const { store: url, dir, name, incarnation, until, seed } = values
if ([url, dir, name, incarnation, until, seed].includes(undefined)) {
  throw new Error(
    'usage: producer.js --store <url> --dir <dir> --name <p1> --incarnation <n> --until <ms> --seed <n>',
  )
}

let lastAcked = -1
for (const file of historyFiles(dir!, `producer-${name}#`)) {
  for (const entry of readHistory<ProducerRecord>(file))
    if (entry.e === 'ack') lastAcked = Math.max(lastAcked, entry.i)
}
const from = Math.max(0, lastAcked + 1 - RESEND_COUNT)
const history = new History(join(dir!, `producer-${name}#${incarnation!.padStart(3, '0')}.ndjson`))
history.write({ e: 'hello', pid: process.pid, from, t: Date.now() } satisfies ProducerRecord)

const store = await openStore(url)
const client = createClient({ store })
const deadline = Number(until)
let next = from
/** One of ENQUEUES_IN_FLIGHT lanes: enqueues issued together share a commit (group commit). */
const lane = async (): Promise<void> => {
  while (Date.now() < deadline) {
    const i = next++
    const { queue, payload } = chaosJob(Number(seed), name!, i)
    history.write({ e: 'send', key: payload.key, i, t: Date.now() } satisfies ProducerRecord)
    const { id, created } = await client.enqueue(JOB_NAME, payload, { queue, uniqueKey: payload.key })
    history.write({ e: 'ack', key: payload.key, i, id, created, t: Date.now() } satisfies ProducerRecord)
    await sleep(ENQUEUE_INTERVAL_MS)
  }
}
await Promise.all(Array.from({ length: ENQUEUES_IN_FLIGHT }, lane))
history.write({ e: 'done', t: Date.now() } satisfies ProducerRecord)
history.close()
await client.close()
await store.close()
