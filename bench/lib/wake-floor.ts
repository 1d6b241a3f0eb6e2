import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import pg from 'pg'

/**
 * The least any wake-up can cost on this machine and server, for the wake scenarios to print
 * beside their own figures: a write that is durable before anybody hears of it, then a message
 * heard on another connection, with the same 5–20 ms gaps (so the CPUs go idle between samples,
 * as they do between real jobs). Both ends are in this process and there is no claim and no job,
 * so it is a lower bound: a real worker is another process, and it still has to claim and start
 * the job after hearing of it.
 */
export interface FloorGaps {
  minMs: number
  maxMs: number
}

/** Redis: one script that SETs a key and PUBLISHes (fsynced first with appendfsync always). */
export async function redisWakeFloor(url: string, samples: number, gaps: FloorGaps): Promise<number[]> {
  const writer = new Redis(url)
  const listener = new Redis(url)
  const channel = 'ferry-bench-wake-floor'
  try {
    await listener.subscribe(channel)
    const heard: number[] = []
    for (let i = 0; i < samples; i++) {
      const message = new Promise<bigint>((resolve) =>
        listener.once('message', () => resolve(process.hrtime.bigint())),
      )
      const start = process.hrtime.bigint()
      await writer.eval(
        "redis.call('SET', KEYS[1], ARGV[1]) redis.call('PUBLISH', ARGV[2], ARGV[1]) return 1",
        1,
        'ferry-bench-wake-floor',
        String(i),
        channel,
      )
      heard.push(Number((await message) - start) / 1e6)
      await sleep(gaps.minMs + Math.random() * (gaps.maxMs - gaps.minMs))
    }
    return heard
  } finally {
    writer.disconnect()
    listener.disconnect()
  }
}

/** PostgreSQL: one autocommit statement that INSERTs a row and NOTIFYs (delivered on commit). */
export async function postgresWakeFloor(
  connectionString: string,
  schema: string,
  samples: number,
  gaps: FloorGaps,
): Promise<number[]> {
  const writer = new pg.Client({ connectionString })
  const listener = new pg.Client({ connectionString })
  await Promise.all([writer.connect(), listener.connect()])
  const table = `"${schema}".bench_wake_floor`
  try {
    await writer.query(`CREATE TABLE ${table} (v text)`)
    await listener.query('LISTEN ferry_bench_wake_floor')
    const heard: number[] = []
    for (let i = 0; i < samples; i++) {
      const message = new Promise<bigint>((resolve) =>
        listener.once('notification', () => resolve(process.hrtime.bigint())),
      )
      const start = process.hrtime.bigint()
      await writer.query({
        name: 'wake-floor',
        text: `WITH w AS (INSERT INTO ${table} (v) VALUES ($1) RETURNING v) SELECT pg_notify('ferry_bench_wake_floor', v) FROM w`,
        values: [String(i)],
      })
      heard.push(Number((await message) - start) / 1e6)
      await sleep(gaps.minMs + Math.random() * (gaps.maxMs - gaps.minMs))
    }
    return heard
  } finally {
    await writer.query(`DROP TABLE IF EXISTS ${table}`).catch(() => {})
    await Promise.allSettled([writer.end(), listener.end()])
  }
}
