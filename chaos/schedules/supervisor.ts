/**
 * The supervisor of the schedules chaos run: starts the scheduler processes, SIGKILLs them around
 * slot boundaries (now and then all of them, for a few slots), restarts what it killed, then lets
 * every scheduler run undisturbed until the missed slots are caught up, stops them and dumps the
 * store's jobs and schedules. Every spawn, ready, kill and exit is written, on this process's
 * clock, to `nemesis.ndjson` in `dir` for the checker.
 */
import type { ChildProcess } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

import { openStore } from '../../src/index.js'
import { buildScripts } from '../build.js'
import { History } from '../history.js'
import { awaitExits, spawnChaosProcess } from '../processes.js'
import { Random } from '../random.js'
import { dumpStore } from '../supervisor.js'
import {
  BOUNDARY_MS,
  END_MARGIN_MS,
  FIRE_WINDOW_MS,
  KILL_EVERY_BOUNDARIES,
  KILL_JITTER_MS,
  LAST_READY_KILL_SHARE,
  LIVE_MARGIN_MS,
  OUTAGE_MS,
  OUTAGE_SHARE,
  READY_TIMEOUT_MS,
  RESTART_DELAY_MS,
  SCHEDULER_COUNT,
  SETTLE_MS,
} from './config.js'
import type { ReadyMessage } from './scheduler-process.js'

export interface ScheduleChaosOptions {
  /** A store URL openStore understands; the store must be empty and reachable. */
  storeUrl: string
  /** What the report calls the store: sqlite, postgres, redis. */
  storeKind: string
  /** Where the histories, logs and the dumps go. */
  dir: string
  /** How long schedulers are killed. */
  durationMs: number
  seed: number
  log?: (line: string) => void
}

export type ScheduleNemesisRecord =
  | { e: 'phase'; phase: 'start' | 'faults' | 'settle' | 'stop' | 'done'; t: number }
  | { e: 'spawn'; name: string; incarnation: number; pid: number; t: number }
  /** When the supervisor heard that the process's worker had started: it was ready by then. */
  | { e: 'ready'; name: string; incarnation: number; pid: number; t: number }
  /** When the SIGKILL was sent: the process ran until then at least. */
  | { e: 'kill'; name: string; incarnation: number; pid: number; t: number }
  /** Every scheduler is killed now, and none is restarted before `until`. */
  | { e: 'outage'; until: number; t: number }
  | {
      e: 'exit'
      name: string
      incarnation: number
      pid: number
      code: number | null
      signal: string | null
      /** False when the process died by itself: a crash the checker reports. */
      expected: boolean
      t: number
    }

export interface ScheduleChaosMeta {
  run: 'schedules'
  store: string
  seed: number
  durationMs: number
  schedulers: number
  liveMarginMs: number
  endMarginMs: number
  startedAt: number
  /** When the kills began: once every scheduler was first ready (the schedules exist by then). */
  faultsStartedAt: number
  faultsEndedAt: number
  /** When every scheduler was ready after the faults; null if they were not within READY_TIMEOUT_MS. */
  settledAt: number | null
  /** When the schedulers were sent SIGTERM. */
  stopAt: number
  stoppedAt: number
}

interface SchedulerSlot {
  name: string
  incarnation: number
  child: ChildProcess | null
  pid: number
  ready: boolean
  /** Set before the supervisor kills or stops it, so its exit is not taken for a crash. */
  expectExit: boolean
  restartTimer: NodeJS.Timeout | null
  /** Not restarted before this (an outage). */
  downUntil: number
  exited: Promise<void>
}

/** Where the scheduler process script is built, under the run's directory. */
const SCRIPT = join('schedules', 'scheduler-process')

export async function runScheduleChaos(options: ScheduleChaosOptions): Promise<ScheduleChaosMeta> {
  const { storeUrl, dir, durationMs, seed, log = () => {} } = options
  const nemesisLog = new History(join(dir, 'nemesis.ndjson'))
  const note = (entry: ScheduleNemesisRecord): void => nemesisLog.write(entry)
  const random = new Random(seed)
  // Restart delays draw from their own generator: they happen at moments the machine decides,
  // and must not shift the nemesis's seeded schedule.
  const restartRandom = new Random(seed ^ 0x5eed)
  let stopping = false

  const bin = join(dir, 'bin')
  buildScripts(bin, ['history', 'schedules/config', SCRIPT])
  const store = await openStore(storeUrl)
  await store.migrate()

  const startedAt = Date.now()

  const start = (slot: SchedulerSlot): void => {
    slot.restartTimer = null
    slot.incarnation++
    const incarnation = slot.incarnation
    const id = `scheduler-${slot.name}#${String(incarnation).padStart(3, '0')}`
    const args = [join(bin, `${SCRIPT}.js`), '--store', storeUrl, '--history', join(dir, `${id}.ndjson`)]
    const child = spawnChaosProcess([...args, '--name', slot.name], join(dir, `${id}.log`), { ipc: true })
    slot.child = child
    slot.pid = child.pid!
    slot.ready = false
    slot.expectExit = false
    note({ e: 'spawn', name: slot.name, incarnation, pid: slot.pid, t: Date.now() })
    child.on('message', (message: ReadyMessage) => {
      if (!message.ready || slot.child !== child || slot.expectExit) return
      slot.ready = true
      note({ e: 'ready', name: slot.name, incarnation, pid: child.pid!, t: Date.now() })
    })
    slot.exited = new Promise((resolve) => {
      child.on('exit', (code, signal) => {
        // A SIGTERM may find a process still opening its store, before its handler is set.
        const expected = slot.expectExit || (stopping && (code === 0 || signal === 'SIGTERM'))
        note({
          e: 'exit',
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
        slot.ready = false
        if (!stopping) {
          const delay = restartRandom.between(...RESTART_DELAY_MS)
          restartAt(slot, Math.max(Date.now() + delay, slot.downUntil))
        }
        resolve()
      })
    })
  }

  const restartAt = (slot: SchedulerSlot, at: number): void => {
    if (slot.restartTimer !== null) clearTimeout(slot.restartTimer)
    slot.restartTimer = setTimeout(() => {
      if (!stopping) start(slot)
    }, at - Date.now())
  }

  const kill = (slot: SchedulerSlot): void => {
    if (slot.child === null || slot.expectExit) return
    slot.expectExit = true
    slot.ready = false
    note({ e: 'kill', name: slot.name, incarnation: slot.incarnation, pid: slot.pid, t: Date.now() })
    slot.child.kill('SIGKILL')
  }

  const schedulers: SchedulerSlot[] = Array.from({ length: SCHEDULER_COUNT }, (_, i) => ({
    name: `s${i + 1}`,
    incarnation: 0,
    child: null,
    pid: 0,
    ready: false,
    expectExit: false,
    restartTimer: null,
    downUntil: 0,
    exited: Promise.resolve(),
  }))
  // Should the supervisor itself fail, no scheduler outlives it.
  const killAll = (): void => {
    for (const slot of schedulers) slot.child?.kill('SIGKILL')
  }
  process.once('exit', killAll)
  for (const slot of schedulers) start(slot)

  /** When every scheduler is ready, or null if they are not within READY_TIMEOUT_MS. */
  const allReady = async (): Promise<number | null> => {
    const from = Date.now()
    while (Date.now() - from < READY_TIMEOUT_MS) {
      if (schedulers.every((slot) => slot.ready)) return Date.now()
      await sleep(50)
    }
    log(`the schedulers were not all ready within ${READY_TIMEOUT_MS / 1000} s`)
    return null
  }
  note({ e: 'phase', phase: 'start', t: startedAt })
  // Kills start once the schedules exist and every scheduler runs: a process killed while it
  // starts tests its start, not the slots.
  const faultsStartedAt = (await allReady()) ?? Date.now()
  const faultsUntil = faultsStartedAt + durationMs

  // The nemesis: its choices come from the seed (when they land depends on the machine).
  log(`kills for ${durationMs / 1000} s, seed ${seed}, store ${options.storeKind}; histories in ${dir}`)
  note({ e: 'phase', phase: 'faults', t: faultsStartedAt })
  let outages = 0
  for (;;) {
    const boundaries = random.integer(...KILL_EVERY_BOUNDARIES)
    const inFire = random.next() < 0.5
    const jitter = random.between(-KILL_JITTER_MS, KILL_JITTER_MS)
    const offset = inFire ? random.between(0, FIRE_WINDOW_MS) : jitter
    const roll = random.next()
    const outageMs = random.between(...OUTAGE_MS)
    const pick = random.next()
    const lastRoll = random.next()
    let at = (Math.floor(Date.now() / BOUNDARY_MS) + boundaries) * BOUNDARY_MS + offset
    if (at <= Date.now()) at += BOUNDARY_MS
    await sleep(Math.min(at, faultsUntil) - Date.now())
    if (at >= faultsUntil) break
    // At least one outage a run: the first comes by half-time.
    const outage = roll < OUTAGE_SHARE || (outages === 0 && Date.now() >= faultsStartedAt + durationMs / 2)
    if (outage) {
      outages++
      const until = Date.now() + outageMs
      note({ e: 'outage', until, t: Date.now() })
      log(`outage: every scheduler down for ${(outageMs / 1000).toFixed(1)} s`)
      for (const slot of schedulers) {
        slot.downUntil = until
        if (slot.child === null) restartAt(slot, until)
        else kill(slot)
      }
    } else {
      // A ready one, so the kill cuts a scheduler that fires slots (a start takes seconds here).
      const ready = schedulers.filter((slot) => slot.ready)
      if (ready.length > 1 || (ready.length === 1 && lastRoll < LAST_READY_KILL_SHARE)) {
        kill(ready[Math.floor(pick * ready.length)]!)
      }
    }
  }

  // Everyone back, undisturbed, until the slots missed in a last outage are caught up.
  const faultsEndedAt = Date.now()
  note({ e: 'phase', phase: 'settle', t: faultsEndedAt })
  for (const slot of schedulers) {
    slot.downUntil = 0
    if (slot.child === null) restartAt(slot, Date.now())
  }
  const settledAt = await allReady()
  if (settledAt !== null) await sleep(SETTLE_MS)

  stopping = true
  const stopAt = Date.now()
  note({ e: 'phase', phase: 'stop', t: stopAt })
  for (const slot of schedulers) {
    if (slot.restartTimer !== null) clearTimeout(slot.restartTimer)
    slot.restartTimer = null
    slot.child?.kill('SIGTERM')
  }
  await awaitExits(schedulers, kill)
  process.off('exit', killAll)
  const stoppedAt = Date.now()

  await dumpStore(store, join(dir, 'dump.ndjson'))
  const { schedules } = await store.schedules()
  writeFileSync(join(dir, 'schedules.json'), `${JSON.stringify(schedules, null, 2)}\n`)
  await store.close()
  note({ e: 'phase', phase: 'done', t: Date.now() })
  nemesisLog.close()

  const meta: ScheduleChaosMeta = {
    run: 'schedules',
    store: options.storeKind,
    seed,
    durationMs,
    schedulers: SCHEDULER_COUNT,
    liveMarginMs: LIVE_MARGIN_MS,
    endMarginMs: END_MARGIN_MS,
    startedAt,
    faultsStartedAt,
    faultsEndedAt,
    settledAt,
    stopAt,
    stoppedAt,
  }
  writeFileSync(join(dir, 'meta.json'), `${JSON.stringify(meta, null, 2)}\n`)
  return meta
}
