import type { Command } from 'commander'
import { getStats, JOB_COUNT_KEYS, type JobCounts, type QueueReport } from '../../admin/inspect.js'
import { withStore } from '../../admin/with-store.js'
import { formatInstant, formatJson, formatTable, toIso } from '../format.js'
import { describeLimits } from './queue-control.js'
import { existingStore } from '../open.js'

export function registerStats(program: Command): void {
  program
    .command('stats')
    .description('jobs per queue and state, and how many completed or died in the last minute')
    .option('--json', 'print a JSON document (shape in docs/cli.md)')
    .action(async (flags: { json?: boolean }) => {
      const report = await withStore(existingStore(program), (store) => getStats(store))
      if (flags.json === true) {
        process.stdout.write(
          formatJson({
            ...report,
            at: toIso(report.at),
            queues: report.queues.map((queue) => ({
              ...queue,
              paused: queue.paused === null ? null : { ...queue.paused, at: toIso(queue.paused.at) },
              oldestReadyAt: queue.oldestReadyAt === null ? null : toIso(queue.oldestReadyAt),
            })),
          }),
        )
        return
      }
      if (report.queues.length === 0) {
        process.stdout.write('no jobs in the store\n')
        return
      }
      const row = (queue: string, counts: JobCounts, control: string): string[] => [
        queue,
        ...JOB_COUNT_KEYS.map((key) => String(counts[key])),
        control,
      ]
      const rows = report.queues.map((queue) => row(queue.queue, queue, controlOf(queue)))
      if (report.queues.length > 1) rows.push(row('(all)', report.totals, ''))
      process.stdout.write(
        formatTable(
          [
            'QUEUE',
            'READY',
            'SCHEDULED',
            'ACTIVE',
            'COMPLETED',
            'DEAD',
            'EXPIRED',
            'COMPLETED/MIN',
            'DEAD/MIN',
            'CONTROL',
          ],
          rows,
          ['left', ...JOB_COUNT_KEYS.map(() => 'right' as const), 'left'],
        ),
      )
      const now = Date.now()
      for (const { queue, paused } of report.queues) {
        if (paused === null) continue
        const who = paused.by === null ? '' : ` by ${paused.by}`
        const why = paused.reason === null ? '' : `: ${paused.reason}`
        process.stdout.write(`${queue} paused ${formatInstant(paused.at, now)}${who}${why}\n`)
      }
    })
}

/** The CONTROL cell: 'paused', the limits, both, or nothing for a queue that runs freely. */
function controlOf(queue: QueueReport): string {
  const parts: string[] = []
  if (queue.paused !== null) parts.push('paused')
  const limits = describeLimits(queue)
  if (limits !== 'no limits') parts.push(limits)
  return parts.join(', ')
}
