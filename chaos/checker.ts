/**
 * The offline checker of a chaos run: reads the histories the producers, workers and nemesis
 * wrote, and the dump of the store taken after the drain, and checks the invariants of
 * docs/reliability.md. It decides every timing question from what the store answered (lease
 * expiries, claim times, per-item results), never from how fast a starved process should run.
 *
 *   tsx chaos/check.ts <dir>
 */
import { existsSync, readFileSync } from 'node:fs'
import { basename, join } from 'node:path'

import type { Job } from '../src/index.js'
import { historyFiles, readHistory } from './history.js'
import type { ProducerRecord } from './producer.js'
import type { WorkerRecord } from './recording-store.js'
import type { ChaosMeta, NemesisRecord } from './supervisor.js'

export interface ChaosCounts {
  /** Distinct keys the producers sent. */
  enqueued: number
  /** Distinct keys whose enqueue resolved. */
  acknowledged: number
  /** Acknowledgements of a key re-sent after a producer restart (answered with the same job). */
  resentAcknowledged: number
  storedJobs: number
  completed: number
  runs: number
  /** Runs of a job beyond its first. */
  duplicates: number
  duplicatesAfterKill: number
  duplicatesAfterFreeze: number
  /** The earlier run's worker was neither killed nor frozen but did not renew in time (CPU starvation). */
  duplicatesAfterStall: number
  workerKills: number
  producerKills: number
  freezes: number
  staleSettlesRejected: number
  staleRenewalsRejected: number
  recoveredLeases: number
  /** Claims answered with less than half the lease left: the store's clock was read long before it claimed. */
  shortLeases: number
  mostAttempts: number
}

export interface CheckResult {
  counts: ChaosCounts
  violations: string[]
}

interface Run {
  id: string
  token: string
  attempt: number
  maxAttempts: number
  /** The expiry the claim set. */
  leaseUntil: number
  /** When the claim was sent, and answered: the store claimed the job in between. */
  sentAt: number
  answeredAt: number
  incarnation: Incarnation
  /** Send times of renewals the store accepted. */
  renewedAt: number[]
  settles: { kind: string; result: string; t0: number }[]
  lostAt: number | null
}

interface Incarnation {
  file: string
  pid: number
  killedAt: number | null
  freezes: { from: number; to: number }[]
}

/** How many violations of one kind are listed before the rest are only counted. */
const LIST_LIMIT = 10

export function readMeta(dir: string): ChaosMeta {
  return JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as ChaosMeta
}

export function checkChaosRun(dir: string): CheckResult {
  const meta = readMeta(dir)
  const violations = new ViolationList()
  const nemesis = readHistory<NemesisRecord>(join(dir, 'nemesis.ndjson'))
  const dump = existsSync(join(dir, 'dump.ndjson')) ? readHistory<Job>(join(dir, 'dump.ndjson')) : []
  if (!existsSync(join(dir, 'dump.ndjson'))) violations.add('dump', 'there is no dump of the store')
  if (!meta.drained) violations.add('drain', 'the queues stopped draining before they were empty')

  // ── processes ──
  const killedAt = new Map<number, number>()
  const freezesOf = new Map<number, { from: number; to: number }[]>()
  let workerKills = 0
  let producerKills = 0
  let freezes = 0
  for (const entry of nemesis) {
    if (entry.e === 'kill') {
      killedAt.set(entry.pid, entry.t)
      if (entry.role === 'worker') workerKills++
      else producerKills++
    } else if (entry.e === 'freeze') {
      freezes++
      const list = freezesOf.get(entry.pid) ?? []
      list.push({ from: entry.t, to: Infinity })
      freezesOf.set(entry.pid, list)
    } else if (entry.e === 'thaw') {
      const open = freezesOf.get(entry.pid)?.find((f) => f.to === Infinity)
      if (open !== undefined) open.to = entry.t
    } else if (entry.e === 'exit') {
      const open = freezesOf.get(entry.pid)?.find((f) => f.to === Infinity)
      if (open !== undefined) open.to = entry.t
      // A SIGKILL takes effect some ms after it is sent, and the process goes on until then (a run
      // it started 8 ms after the kill was sent, on a loaded machine, was cut by it all the same):
      // the kill is when the process was seen to die.
      if (killedAt.has(entry.pid)) killedAt.set(entry.pid, entry.t)
      if (!entry.expected) {
        violations.add(
          'crash',
          `${entry.role} ${entry.name}#${entry.incarnation} (pid ${entry.pid}) exited by itself: code ${entry.code}, signal ${entry.signal}`,
        )
      }
    }
  }

  // ── producers ──
  const sent = new Set<string>()
  const ackedIds = new Map<string, Set<string>>()
  let resentAcknowledged = 0
  for (const file of historyFiles(dir, 'producer-')) {
    for (const entry of readHistory<ProducerRecord>(file)) {
      if (entry.e === 'send') sent.add(entry.key)
      if (entry.e !== 'ack') continue
      const ids = ackedIds.get(entry.key) ?? new Set()
      if (ids.size > 0) resentAcknowledged++
      ids.add(entry.id)
      ackedIds.set(entry.key, ids)
    }
  }
  const jobsById = new Map(dump.map((job) => [job.id, job]))
  const jobsByKey = new Map<string, Job[]>()
  for (const job of dump) {
    if (job.uniqueKey === null) {
      violations.add('phantom', `job ${job.id} has no unique key: no producer sent it`)
      continue
    }
    jobsByKey.set(job.uniqueKey, [...(jobsByKey.get(job.uniqueKey) ?? []), job])
    if (!sent.has(job.uniqueKey))
      violations.add('phantom', `job ${job.id} has key ${job.uniqueKey}, never sent`)
  }
  for (const [key, jobs] of jobsByKey) {
    if (jobs.length > 1) {
      violations.add('unique', `key ${key} has ${jobs.length} jobs: ${jobs.map((job) => job.id).join(', ')}`)
    }
  }
  for (const [key, ids] of ackedIds) {
    if (ids.size > 1)
      violations.add('unique', `key ${key} was acknowledged as different jobs: ${[...ids].join(', ')}`)
    for (const id of ids) {
      const job = jobsById.get(id)
      if (job === undefined) violations.add('loss', `acknowledged job ${id} (key ${key}) is not in the store`)
      else if (job.uniqueKey !== key)
        violations.add('loss', `acknowledged job ${id} has key ${job.uniqueKey}, not ${key}`)
    }
  }

  // ── runs ──
  const runsByJob = new Map<string, Run[]>()
  let staleSettlesRejected = 0
  let staleRenewalsRejected = 0
  let recoveredLeases = 0
  let shortLeases = 0
  for (const file of historyFiles(dir, 'worker-')) {
    const records = readHistory<WorkerRecord>(file)
    const hello = records.find((entry) => entry.e === 'hello')
    const pid = hello?.e === 'hello' ? hello.pid : -1
    const incarnation: Incarnation = {
      file: basename(file),
      pid,
      killedAt: killedAt.get(pid) ?? null,
      freezes: freezesOf.get(pid) ?? [],
    }
    const runs = new Map<string, Run>()
    for (const entry of records) {
      switch (entry.e) {
        case 'start': {
          const run: Run = {
            id: entry.id,
            token: entry.token,
            attempt: entry.attempt,
            maxAttempts: entry.maxAttempts,
            leaseUntil: entry.leaseUntil,
            sentAt: entry.t0,
            answeredAt: entry.t1,
            incarnation,
            renewedAt: [],
            settles: [],
            lostAt: null,
          }
          runs.set(entry.token, run)
          if (entry.leaseUntil - entry.t1 < meta.leaseMs / 2) shortLeases++
          runsByJob.set(entry.id, [...(runsByJob.get(entry.id) ?? []), run])
          break
        }
        case 'renew':
          if (entry.result === 'ok') runs.get(entry.token)?.renewedAt.push(entry.t0)
          else staleRenewalsRejected++
          break
        case 'settle':
          runs.get(entry.token)?.settles.push({ kind: entry.kind, result: entry.result, t0: entry.t0 })
          if (entry.result === 'lease_lost') staleSettlesRejected++
          break
        case 'lost': {
          const run = runs.get(entry.token)
          if (run !== undefined) run.lostAt ??= entry.t
          break
        }
        case 'recover':
          recoveredLeases += entry.retried.length + entry.dead.length
          break
      }
    }
  }

  // ── per job ──
  let runCount = 0
  let duplicates = 0
  let afterKill = 0
  let afterFreeze = 0
  let afterStall = 0
  let completed = 0
  let mostAttempts = 0
  for (const job of dump) {
    mostAttempts = Math.max(mostAttempts, job.attempts)
    if (job.attempts > job.maxAttempts) {
      violations.add('attempts', `job ${job.id} used ${job.attempts} attempts of ${job.maxAttempts}`)
    }
    if (job.state === 'completed') completed++
    else
      violations.add(
        'final',
        `job ${job.id} ended ${job.state}${job.lastError ? `: ${job.lastError.message}` : ''}`,
      )

    // The store counts an attempt at every claim: its order is the order of the claims.
    const runs = (runsByJob.get(job.id) ?? []).sort((a, b) => a.attempt - b.attempt)
    runCount += runs.length
    const accepted = runs.flatMap((run) =>
      run.settles.filter((s) => s.result === 'ok' && s.kind === 'completed').map((s) => ({ run, at: s.t0 })),
    )
    if (accepted.length > 1) violations.add('fencing', `job ${job.id} was completed ${accepted.length} times`)
    if (job.state === 'completed' && accepted.length === 0) {
      // The settle may have committed just before the kill, with no time to write it down.
      const unrecorded = runs.some(
        (run) => endingSettles(run).length === 0 && run.incarnation.killedAt !== null,
      )
      if (!unrecorded) violations.add('final', `job ${job.id} is completed but no run of it completed`)
    }
    for (let k = 0; k < runs.length; k++) {
      const later = runs[k]!
      if (k > 0 && later.attempt <= runs[k - 1]!.attempt) {
        violations.add(
          'attempts',
          `job ${job.id}: attempt ${later.attempt} came after attempt ${runs[k - 1]!.attempt}`,
        )
      }
      for (let j = 0; j < k; j++) checkPair(job.id, runs[j]!, later, meta.leaseMs, violations)
      if (k === 0) continue
      duplicates++
      switch (explain(runs[k - 1]!)) {
        case 'kill':
          afterKill++
          break
        case 'freeze':
          afterFreeze++
          break
        case 'stall':
          afterStall++
          break
        case 'requeued':
          break
        case null:
          violations.add(
            'duplicate',
            `job ${job.id}: run ${k + 1} is explained by no kill, freeze or lost lease`,
          )
      }
    }
    for (const run of runs) {
      if (endingSettles(run).length === 0 && run.lostAt === null && run.incarnation.killedAt === null) {
        violations.add(
          'final',
          `job ${job.id}: a run in ${run.incarnation.file} never ended, and its worker was not killed`,
        )
      }
    }
  }
  // Histories from before mostLeased was recorded ran without prefetch: concurrency was the most.
  if (afterKill + afterFreeze > (workerKills + freezes) * (meta.mostLeased ?? meta.concurrency)) {
    violations.add(
      'duplicate',
      `${afterKill + afterFreeze} duplicates from ${workerKills} kills and ${freezes} freezes`,
    )
  }
  if (freezes > 0 && staleSettlesRejected + staleRenewalsRejected === 0) {
    violations.add(
      'fencing',
      `${freezes} freezes, but no stale lease was ever presented: fencing went untested`,
    )
  }

  return {
    counts: {
      enqueued: sent.size,
      acknowledged: ackedIds.size,
      resentAcknowledged,
      storedJobs: dump.length,
      completed,
      runs: runCount,
      duplicates,
      duplicatesAfterKill: afterKill,
      duplicatesAfterFreeze: afterFreeze,
      duplicatesAfterStall: afterStall,
      workerKills,
      producerKills,
      freezes,
      staleSettlesRejected,
      staleRenewalsRejected,
      recoveredLeases,
      shortLeases,
      mostAttempts,
    },
    violations: violations.list(),
  }
}

/**
 * When the earlier run had not ended when the later one was claimed, its lease must have run out.
 * Only certain violations count: the later claim was answered before the earliest moment the
 * earlier lease could have expired (each accepted renewal was computed no earlier than it was sent).
 */
function checkPair(id: string, earlier: Run, later: Run, leaseMs: number, violations: ViolationList): void {
  // A settlement or a lost lease ends the claim; a killed worker's claim lasts until its lease runs out.
  const ended = recordedEnd(earlier)
  if (ended !== null && ended <= later.sentAt) return
  const validUntil = Math.max(earlier.leaseUntil, ...earlier.renewedAt.map((t) => t + leaseMs))
  if (later.answeredAt < validUntil) {
    violations.add(
      'overlap',
      `job ${id}: attempt ${later.attempt} (${later.incarnation.file}) was claimed ${validUntil - later.answeredAt} ms ` +
        `before the lease of attempt ${earlier.attempt} (${earlier.incarnation.file}) ran out`,
    )
  }
  for (const settle of earlier.settles) {
    if (settle.result === 'ok' && settle.t0 >= later.answeredAt) {
      violations.add(
        'fencing',
        `job ${id}: a settle (${settle.kind}) of replaced attempt ${earlier.attempt} was accepted`,
      )
    }
  }
  if (earlier.renewedAt.some((t) => t >= later.answeredAt)) {
    violations.add('fencing', `job ${id}: a renewal of replaced attempt ${earlier.attempt} was accepted`)
  }
}

/** A settle answered 'locked' wrote nothing (the row was locked): the run goes on after it. */
function endingSettles(run: Run): Run['settles'] {
  return run.settles.filter((s) => s.result !== 'locked')
}

function recordedEnd(run: Run): number | null {
  const ends = [...endingSettles(run).map((s) => s.t0), ...(run.lostAt === null ? [] : [run.lostAt])]
  return ends.length > 0 ? Math.min(...ends) : null
}

/** Why a run was followed by another: its worker was killed or frozen during it, or it lost its lease. */
function explain(run: Run): 'kill' | 'freeze' | 'stall' | 'requeued' | null {
  if (run.settles.some((s) => s.result === 'ok' && (s.kind === 'retry' || s.kind === 'snoozed')))
    return 'requeued'
  const { killedAt, freezes } = run.incarnation
  const ended = recordedEnd(run)
  if (ended === null && killedAt !== null && killedAt >= run.sentAt) return 'kill'
  const end = ended ?? killedAt ?? Infinity
  if (freezes.some((f) => f.from <= end && f.to >= run.sentAt)) return 'freeze'
  if (run.lostAt !== null || run.settles.some((s) => s.result === 'lease_lost')) return 'stall'
  return null
}

/** Violations by kind, each kind listed up to LIST_LIMIT and the rest counted. */
export class ViolationList {
  private readonly byKind = new Map<string, string[]>()

  add(kind: string, message: string): void {
    this.byKind.set(kind, [...(this.byKind.get(kind) ?? []), message])
  }

  list(): string[] {
    return [...this.byKind].flatMap(([kind, messages]) => [
      ...messages.slice(0, LIST_LIMIT).map((message) => `${kind}: ${message}`),
      ...(messages.length > LIST_LIMIT ? [`${kind}: … and ${messages.length - LIST_LIMIT} more`] : []),
    ])
  }
}

/** The table and verdict line `npm run chaos` prints (Markdown, so docs/reliability.md can keep it). */
export function formatReport(meta: ChaosMeta, result: CheckResult): string {
  const c = result.counts
  const rows: [string, string | number][] = [
    ['enqueued (keys sent)', c.enqueued],
    ['acknowledged', c.acknowledged],
    ['re-sent after a producer restart, same job', c.resentAcknowledged],
    ['jobs in the store', c.storedJobs],
    ['completed', c.completed],
    ['runs', c.runs],
    ['duplicate runs', c.duplicates],
    ['… after a worker kill', c.duplicatesAfterKill],
    ['… after a freeze', c.duplicatesAfterFreeze],
    ['… after a stall (lease not renewed in time)', c.duplicatesAfterStall],
    ['worker kills', c.workerKills],
    ['producer kills', c.producerKills],
    ['freezes (SIGSTOP past the lease)', c.freezes],
    ['leases recovered', c.recoveredLeases],
    ['stale settles rejected', c.staleSettlesRejected],
    ['stale renewals rejected', c.staleRenewalsRejected],
    ['claims answered with under half the lease left', c.shortLeases],
    ['most attempts of one job', c.mostAttempts],
  ]
  const drainS = ((meta.drainedAt - meta.faultsEndedAt) / 1000).toFixed(1)
  const lines = [
    `chaos: store ${meta.store}, seed ${meta.seed}, ${meta.durationMs / 1000} s of faults, ` +
      `${meta.drained ? 'drained in' : 'stopped draining after'} ${drainS} s, ` +
      `lease ${meta.leaseMs} ms, ${meta.producers} producers, ${meta.workers} workers × ${meta.concurrency}`,
    '',
    ...markdownTable(['count', 'value'], rows),
    '',
    ...verdictLines(result.violations, meta.seed),
  ]
  return lines.join('\n')
}

/** A Markdown table, its columns padded: columns of figures to the right, the others to the left. */
export function markdownTable(
  header: readonly string[],
  rows: readonly (readonly (string | number)[])[],
): string[] {
  const cells = [header, ...rows].map((row) => row.map(String))
  const widths = header.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)))
  const figures = header.map((_, i) => i > 0 && rows.every((row) => /^\d/.test(String(row[i]))))
  const line = (row: readonly string[]): string =>
    `| ${row.map((cell, i) => (figures[i] ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join(' | ')} |`
  return [line(cells[0]!), line(widths.map((width) => '-'.repeat(width))), ...cells.slice(1).map(line)]
}

/** The violations, one a line, and the verdict line the chaos tests look for. */
export function verdictLines(violations: readonly string[], seed: number): string[] {
  return [
    ...(violations.length > 0 ? [...violations.map((v) => `VIOLATION ${v}`), ''] : []),
    violations.length === 0
      ? `verdict: PASS: every invariant held (seed ${seed})`
      : `verdict: FAIL: ${violations.length} violation(s) (seed ${seed})`,
  ]
}
