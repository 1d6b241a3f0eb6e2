import type { Command } from 'commander'
import { getStats, JOB_COUNT_KEYS, type JobCounts } from '../../admin/inspect.js'
import { withStore } from '../../admin/with-store.js'
import { formatJson, formatTable, toIso } from '../format.js'
import { existingStore } from '../open.js'

export function registerStats(program: Command): void {
  program
    .command('stats')
    .description('jobs per queue and state, and how many completed or died in the last minute')
    .option('--json', 'print a JSON document (shape in docs/cli.md)')
    .action(async (flags: { json?: boolean }) => {
      const report = await withStore(existingStore(program), (store) => getStats(store))
      if (flags.json === true) {
        process.stdout.write(formatJson({ ...report, at: toIso(report.at) }))
        return
      }
      if (report.queues.length === 0) {
        process.stdout.write('no jobs in the store\n')
        return
      }
      const row = (queue: string, counts: JobCounts): string[] => [
        queue,
        ...JOB_COUNT_KEYS.map((key) => String(counts[key])),
      ]
      const rows = report.queues.map((counts) => row(counts.queue, counts))
      if (report.queues.length > 1) rows.push(row('(all)', report.totals))
      process.stdout.write(
        formatTable(
          ['QUEUE', 'READY', 'SCHEDULED', 'ACTIVE', 'COMPLETED', 'DEAD', 'COMPLETED/MIN', 'DEAD/MIN'],
          rows,
          ['left', ...JOB_COUNT_KEYS.map(() => 'right' as const)],
        ),
      )
    })
}
