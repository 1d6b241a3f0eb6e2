/**
 * The handler module of the pool tests: one job per misbehaviour, plus `pid` (which child ran
 * it) and `grow` (keeps memory alive in the child, for RSS recycling).
 */
import { threadId } from 'node:worker_threads'
import { defineJobs, snooze } from '../../../src/index.js'

// Lets a test make children fail to start after the pool started (the respawn backoff).
if (process.env.POOL_HANDLERS_REFUSE_TO_LOAD === '1') throw new Error('refusing to load (test)')

const kept: Buffer[] = []

export default defineJobs({
  pid: () => process.pid,
  /** Which process and thread ran the job. */
  where: () => `${process.pid}:${threadId}`,
  echo: (payload: unknown) => payload,
  throws: () => {
    throw new Error('boom')
  },
  throwsString: () => {
    throw 'a string'
  },
  snoozes: () => snooze(5000),
  exits: () => process.exit(3),
  killsSelf: () => process.kill(process.pid, 'SIGKILL'),
  writesStderr: () => {
    for (let i = 1; i <= 30; i++) console.error(`stderr line ${i}`)
    process.exit(1)
  },
  logs: ({ lines }: { lines: string[] }) => {
    for (const line of lines) console.log(line)
    return lines.length
  },
  neverResolves: () => new Promise(() => {}),
  honoursAbort: (_payload: unknown, { signal }) =>
    new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
  blocksLoop: () => {
    for (;;);
  },
  oom: () => {
    const hoard: unknown[] = []
    for (;;) hoard.push(new Array(100_000).fill(Math.random()))
  },
  grow: ({ mb }: { mb: number }) => {
    kept.push(Buffer.alloc(mb * 1024 * 1024, 1))
    return process.pid
  },
  bigint: () => 10n,
  /** Waits `ms`, then says where it ran and when: for the order of jobs handed ahead. */
  timed: async ({ ms }: { ms: number }) => {
    const start = Date.now()
    await new Promise((resolve) => setTimeout(resolve, ms))
    return { where: `${process.pid}:${threadId}`, start, end: Date.now() }
  },
})
