/**
 * The worker registry's and throughput's arguments and replies on Redis (lua/heartbeat.lua,
 * lua/workers.lua, lua/throughput.lua). The rules (checks, what is kept how long) are the
 * kernel's (kernel/workers.ts).
 */
import {
  byHostAndPid,
  byMinuteAndQueue,
  EXPIRED_WORKERS_PER_HEARTBEAT,
  OLD_MINUTES_PER_HEARTBEAT,
  THROUGHPUT_KEEP_MS,
  toWorkerRecord,
} from '../kernel/workers.js'
import type { HeartbeatParams, ThroughputCount, ThroughputParams, WorkerRecord } from '../store.js'
import { integer } from './redis-encoding.js'

/** heartbeat.lua's arguments; `counts` as checkHeartbeatParams merged and ordered them. */
export function heartbeatArgs(
  { worker, ttlMs }: HeartbeatParams,
  counts: readonly ThroughputCount[],
): string[] {
  const args = [
    worker.workerId,
    JSON.stringify(worker),
    integer(ttlMs),
    integer(THROUGHPUT_KEEP_MS),
    integer(EXPIRED_WORKERS_PER_HEARTBEAT),
    integer(OLD_MINUTES_PER_HEARTBEAT),
  ]
  for (const { minute, queue, completed, failed } of counts) {
    args.push(integer(minute), queue, integer(completed), integer(failed))
  }
  return args
}

/** workers.lua's reply: each record is its heartbeat time, a space, and its WorkerInfo. */
export function toWorkerRecords(reply: readonly string[]): WorkerRecord[] {
  return reply
    .map((record) => {
      const space = record.indexOf(' ')
      return toWorkerRecord(record.slice(space + 1), Number(record.slice(0, space)))
    })
    .sort(byHostAndPid)
}

export function throughputArgs({ since, until }: ThroughputParams): string[] {
  return [integer(since), until === undefined ? '' : integer(until), integer(THROUGHPUT_KEEP_MS)]
}

/** throughput.lua's reply: minutes, each with its hash ('c <queue>' and 'f <queue>' -> count). */
export function toThroughputCounts(reply: readonly (string | string[])[], queue?: string): ThroughputCount[] {
  const counts: ThroughputCount[] = []
  for (let i = 0; i < reply.length; i += 2) {
    const minute = Number(reply[i])
    const byQueue = new Map<string, ThroughputCount>()
    const fields = reply[i + 1] as string[]
    for (let f = 0; f < fields.length; f += 2) {
      const field = fields[f]!
      const name = field.slice(2)
      if (queue !== undefined && name !== queue) continue
      let count = byQueue.get(name)
      if (count === undefined) {
        count = { minute, queue: name, completed: 0, failed: 0 }
        byQueue.set(name, count)
      }
      count[field.startsWith('c') ? 'completed' : 'failed'] = Number(fields[f + 1])
    }
    counts.push(...byQueue.values())
  }
  return counts.sort(byMinuteAndQueue)
}
