/**
 * The chaos supervisor: starts the producers and workers, runs the nemesis, restarts what it
 * killed, stops the faults, lets the system drain, stops the workers and dumps the store. Every
 * process's history and the nemesis's own are left in `dir` for the checker.
 */
import type { ChildProcess } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

import { openStore, type Job, type Store } from '../src/index.js'
import {
  DRAIN_NO_PROGRESS_MS,
  FREEZE_MS,
  LEASE_MS,
  PRODUCER_COUNT,
  QUEUES,
  RECOVER_INTERVAL_MS,
  WORKER_CONCURRENCY,
  WORKER_PREFETCH,
  WORKER_COUNT,
} from './config.js'
import { mostLeasedJobs } from '../src/worker/prefetch.js'
import { buildProcessScripts } from './build.js'
import { History } from './history.js'
import { awaitExits, spawnChaosProcess } from './processes.js'
import { Random } from './random.js'

export interface ChaosOptions {
  /** A store URL openStore understands; the store must be empty and reachable. */
  storeUrl: string
  /** What the report calls the store: sqlite, postgres, redis. */
  storeKind: string
  /** Where the histories, logs and the dump go. */
  dir: string
  /** How long faults are injected (and producers enqueue). */
  durationMs: number
  seed: number
  log?: (line: string) => void
}

export type Role = 'producer' | 'worker'

export type NemesisRecord =
  | { e: 'phase'; phase: 'faults' | 'drain' | 'stop' | 'done'; t: number }
  | { e: 'spawn'; role: Role; name: string; incarnation: number; pid: number; t: number }
  | {
      e: 'exit'
      role: Role
      name: string
      incarnation: number
      pid: number
      code: number | null
      signal: string | null
      /** False when the process died by itself: a crash the checker reports. */
      expected: boolean
      t: number
    }
  | { e: 'kill'; role: Role; name: string; pid: number; t: number }
  | { e: 'freeze'; name: string; pid: number; t: number }
  | { e: 'thaw'; name: string; pid: number; t: number }

export interface ChaosMeta {
  store: string
  seed: number
  durationMs: number
  leaseMs: number
  freezeMs: number
  recoverIntervalMs: number
  producers: number
  workers: number
  concurrency: number
  /** The most jobs one worker holds leases on (mostLeasedJobs): what one kill or freeze may run again. */
  mostLeased?: number
  startedAt: number
  faultsEndedAt: number
  drainedAt: number
  drained: boolean
  stoppedAt: number
}

interface Slot {
  role: Role
  name: string
  incarnation: number
  child: ChildProcess | null
  pid: number
  frozen: boolean
  thawTimer: NodeJS.Timeout | null
  /** Set before the supervisor kills or stops it, so its exit is not taken for a crash. */
  expectExit: boolean
  restartTimer: NodeJS.Timeout | null
  /** A producer that exited 0: it reached the end of the run. */
  finished: boolean
  exited: Promise<void>
}

export async function runChaos(options: ChaosOptions): Promise<ChaosMeta> {
  const { storeUrl, dir, durationMs, seed, log = () => {} } = options
  const nemesisLog = new History(join(dir, 'nemesis.ndjson'))
  const note = (entry: NemesisRecord): void => nemesisLog.write(entry)
  const random = new Random(seed)
  // Restart delays draw from their own generator: they happen at moments the machine decides,
  // and must not shift the nemesis's seeded schedule.
  const restartRandom = new Random(seed ^ 0x5eed)
  let stopping = false

  const scripts = buildProcessScripts(join(dir, 'bin'))
  const store = await openStore(storeUrl)
  await store.migrate()

  const startedAt = Date.now()
  const producersUntil = startedAt + durationMs

  const start = (slot: Slot): void => {
    slot.incarnation++
    const id = `${slot.role}-${slot.name}#${String(slot.incarnation).padStart(3, '0')}`
    const args =
      slot.role === 'worker'
        ? [
            scripts.worker,
            ...['--store', storeUrl, '--history', join(dir, `${id}.ndjson`)],
            ...['--name', slot.name, '--handlers', scripts.handlers],
          ]
        : [
            scripts.producer,
            ...['--store', storeUrl, '--dir', dir, '--name', slot.name],
            ...['--incarnation', String(slot.incarnation), '--until', String(producersUntil)],
            ...['--seed', String(seed)],
          ]
    const child = spawnChaosProcess(args, join(dir, `${id}.log`))
    slot.child = child
    slot.pid = child.pid!
    slot.expectExit = false
    slot.frozen = false
    const incarnation = slot.incarnation
    note({ e: 'spawn', role: slot.role, name: slot.name, incarnation, pid: slot.pid, t: Date.now() })
    slot.exited = new Promise((resolve) => {
      child.on('exit', (code, signal) => {
        const finished = slot.role === 'producer' && code === 0
        const expected = slot.expectExit || finished || (stopping && slot.role === 'worker' && code === 0)
        note({
          e: 'exit',
          role: slot.role,
          name: slot.name,
          incarnation,
          pid: child.pid!,
          code,
          signal,
          expected,
          t: Date.now(),
        })
        if (!expected) log(`${id} exited by itself (code ${code}, signal ${signal}): see ${id}.log`)
        slot.child = null
        slot.frozen = false
        if (slot.thawTimer !== null) clearTimeout(slot.thawTimer)
        slot.thawTimer = null
        slot.finished = finished
        if (!stopping && !finished) {
          slot.restartTimer = setTimeout(
            () => {
              slot.restartTimer = null
              if (!stopping) start(slot)
            },
            restartRandom.between(0, 500),
          )
        }
        resolve()
      })
    })
  }

  const slots = (role: Role, count: number, prefix: string): Slot[] =>
    Array.from({ length: count }, (_, i) => ({
      role,
      name: `${prefix}${i + 1}`,
      incarnation: 0,
      child: null,
      pid: 0,
      frozen: false,
      thawTimer: null,
      expectExit: false,
      restartTimer: null,
      finished: false,
      exited: Promise.resolve(),
    }))
  const workers = slots('worker', WORKER_COUNT, 'w')
  const producers = slots('producer', PRODUCER_COUNT, 'p')
  // Should the supervisor itself fail, no producer or worker outlives it.
  const killAll = (): void => {
    for (const slot of [...workers, ...producers]) slot.child?.kill('SIGKILL')
  }
  process.once('exit', killAll)
  for (const slot of [...workers, ...producers]) start(slot)

  const kill = (slot: Slot): void => {
    if (slot.child === null) return
    slot.expectExit = true
    note({ e: 'kill', role: slot.role, name: slot.name, pid: slot.pid, t: Date.now() })
    slot.child.kill('SIGKILL')
  }
  const thaw = (slot: Slot): void => {
    if (slot.thawTimer !== null) clearTimeout(slot.thawTimer)
    slot.thawTimer = null
    if (!slot.frozen || slot.child === null) return
    slot.frozen = false
    slot.child.kill('SIGCONT')
    note({ e: 'thaw', name: slot.name, pid: slot.pid, t: Date.now() })
  }
  const freeze = (slot: Slot): void => {
    if (slot.child === null || slot.frozen) return
    slot.frozen = true
    slot.child.kill('SIGSTOP')
    note({ e: 'freeze', name: slot.name, pid: slot.pid, t: Date.now() })
    slot.thawTimer = setTimeout(() => thaw(slot), FREEZE_MS)
  }

  // The nemesis: its choices come from the seed (when they land depends on the machine).
  log(`faults for ${durationMs / 1000} s, seed ${seed}, store ${options.storeKind}; histories in ${dir}`)
  note({ e: 'phase', phase: 'faults', t: startedAt })
  while (Date.now() < producersUntil) {
    await sleep(random.between(200, 1000))
    if (Date.now() >= producersUntil) break
    const roll = random.next()
    const worker = random.pick(workers)
    const producer = random.pick(producers)
    if (roll < 0.6) kill(worker)
    else if (roll < 0.8) kill(producer)
    else freeze(worker)
  }
  const faultsEndedAt = Date.now()
  note({ e: 'phase', phase: 'drain', t: faultsEndedAt })
  for (const slot of workers) thaw(slot)
  log('faults stopped; draining')

  // Producers stop by themselves at the end of the window; one restarted just now exits at once.
  const { drained, left } = await untilDrained(
    store,
    () => producers.every((slot) => slot.finished),
    DRAIN_NO_PROGRESS_MS,
  )
  const drainedAt = Date.now()
  log(
    drained
      ? `drained in ${((drainedAt - faultsEndedAt) / 1000).toFixed(1)} s`
      : `the queues stopped draining: ${left} jobs left, none finished in ${DRAIN_NO_PROGRESS_MS / 1000} s`,
  )

  stopping = true
  note({ e: 'phase', phase: 'stop', t: Date.now() })
  for (const slot of [...workers, ...producers]) {
    if (slot.restartTimer !== null) clearTimeout(slot.restartTimer)
    slot.restartTimer = null
    thaw(slot)
    // A producer still running here overran the drain deadline (reported as such); a worker must stop cleanly.
    if (slot.role === 'producer') slot.expectExit = true
    slot.child?.kill('SIGTERM')
  }
  await awaitExits([...workers, ...producers], kill)
  process.off('exit', killAll)
  const stoppedAt = Date.now()

  await dumpStore(store, join(dir, 'dump.ndjson'))
  await store.close()
  note({ e: 'phase', phase: 'done', t: Date.now() })
  nemesisLog.close()

  const meta: ChaosMeta = {
    store: options.storeKind,
    seed,
    durationMs,
    leaseMs: LEASE_MS,
    freezeMs: FREEZE_MS,
    recoverIntervalMs: RECOVER_INTERVAL_MS,
    producers: PRODUCER_COUNT,
    workers: WORKER_COUNT,
    concurrency: WORKER_CONCURRENCY,
    mostLeased: mostLeasedJobs(WORKER_CONCURRENCY, WORKER_PREFETCH),
    startedAt,
    faultsEndedAt,
    drainedAt,
    drained,
    stoppedAt,
  }
  writeFileSync(join(dir, 'meta.json'), `${JSON.stringify(meta, null, 2)}\n`)
  return meta
}

/**
 * Waits until the producers are done and no job of the chaos queues is left, or gives up once no
 * job has finished for `noProgressMs`: the workers stopped consuming. Says how many jobs were left.
 */
export async function untilDrained(
  store: Store,
  producersDone: () => boolean,
  noProgressMs: number,
): Promise<{ drained: boolean; left: number }> {
  let finished = -1
  let progressAt = Date.now()
  for (;;) {
    const progress = await progressOf(store)
    if (producersDone() && progress.pending === 0) return { drained: true, left: 0 }
    if (progress.finished > finished) {
      finished = progress.finished
      progressAt = Date.now()
    } else if (Date.now() - progressAt >= noProgressMs) {
      return { drained: false, left: progress.pending }
    }
    await sleep(250)
  }
}

/** Jobs of the chaos queues not yet final, and those that are (completed or dead). */
async function progressOf(store: Store): Promise<{ pending: number; finished: number }> {
  const progress = { pending: 0, finished: 0 }
  for (const row of await store.stats()) {
    if (!(QUEUES as readonly string[]).includes(row.queue)) continue
    progress.pending += row.ready + row.scheduled + row.active
    progress.finished += row.completed + row.dead
  }
  return progress
}

/** Every job, one JSON line each: the checker's view of the store after the run. */
export async function dumpStore(store: Store, path: string): Promise<void> {
  const lines: string[] = []
  let cursor: string | null = null
  do {
    const page: { jobs: Job[]; nextCursor: string | null } = await store.listJobs({
      limit: 1000,
      ...(cursor === null ? {} : { cursor }),
    })
    for (const job of page.jobs) lines.push(JSON.stringify(job))
    cursor = page.nextCursor
  } while (cursor !== null)
  writeFileSync(path, lines.length === 0 ? '' : `${lines.join('\n')}\n`)
}
