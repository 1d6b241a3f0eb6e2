// The periodic one-line summary `ferry work` prints on a terminal, so a person watching sees the
// worker at work rather than silence between failures:
//
//   14:03:30 ----- 1,234 done, 56/s, 3 failed, 1 dead, 7 of 10 active
//
// Printed as lines, not redrawn in place: the worker's log lines and an inline handler's own
// output share the terminal, and a status line redrawn under them would be torn by every write
// Ferry does not make. Only on a terminal (the caller checks): a pipe or a file gets the JSON log.

import type { Worker } from '../worker/worker.js'
import { clockTime, type Paint } from './pretty-log.js'

/** What one summary line counts: totals since the worker started, and the jobs running now. */
export interface SummaryCounts {
  completed: number
  failed: number
  dead: number
  active: number
}

/** An idle worker whose counts did not move says so this often, not at every interval. */
const IDLE_SUMMARY_EVERY_MS = 60_000

const numberFormat = new Intl.NumberFormat('en-US')

/** The line's text: totals, the completion rate over `elapsedMs` since `previous`, the slots in use. */
export function formatSummary(
  counts: SummaryCounts,
  previous: SummaryCounts,
  elapsedMs: number,
  concurrency: number,
): string {
  const rate = elapsedMs <= 0 ? 0 : ((counts.completed - previous.completed) * 1000) / elapsedMs
  const rateText = rate < 10 ? rate.toFixed(1) : numberFormat.format(Math.round(rate))
  return (
    `${numberFormat.format(counts.completed)} done, ${rateText}/s, ` +
    `${numberFormat.format(counts.failed)} failed, ${numberFormat.format(counts.dead)} dead, ` +
    `${counts.active} of ${concurrency} active`
  )
}

/**
 * Writes a summary every `intervalMs` while something happens (the counts moved, or jobs run),
 * and once a minute while the worker idles; stops with the worker. The timer keeps no process alive.
 */
export function startWorkerSummary(
  worker: Worker,
  { intervalMs, write, paint }: { intervalMs: number; write: (line: string) => void; paint: Paint },
): void {
  const snapshot = (): SummaryCounts => {
    const { completed, failed, dead } = worker.counts
    return { completed, failed, dead, active: worker.activeCount }
  }
  let previous = snapshot()
  let previousAt = Date.now()
  let printedAt = previousAt
  const timer = setInterval(() => {
    const counts = snapshot()
    const now = Date.now()
    const moved =
      counts.completed !== previous.completed ||
      counts.failed !== previous.failed ||
      counts.dead !== previous.dead
    if (moved || counts.active > 0 || now - printedAt >= IDLE_SUMMARY_EVERY_MS) {
      const text = formatSummary(counts, previous, now - previousAt, worker.concurrency)
      write(`${paint(clockTime(new Date(now)), 'dim')} ${paint(`----- ${text}`, 'dim')}`)
      printedAt = now
    }
    previous = counts
    previousAt = now
  }, intervalMs)
  timer.unref()
  worker.on('worker:stopping', () => clearInterval(timer))
}
