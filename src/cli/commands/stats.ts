import type { Command } from 'commander'
import type { QueueStats } from '../../store/store.js'
import { formatJson, formatTable, toIso } from '../format.js'
import { openExistingStore } from '../open.js'

/** The throughput window: one minute, so the recent counts read directly as a per-minute rate. */
const RECENT_WINDOW_MS = 60_000

const COUNT_KEYS = [
  'ready',
  'scheduled',
  'active',
  'completed',
  'dead',
  'recentCompletedCount',
  'recentDeadCount',
] as const

type Counts = Record<(typeof COUNT_KEYS)[number], number>

export function registerStats(program: Command): void {
  program
    .command('stats')
    .description('jobs per queue and state, and how many completed or died in the last minute')
    .option('--json', 'print a JSON document (shape in docs/cli.md)')
    .action(async (flags: { json?: boolean }) => {
      const store = await openExistingStore(program)
      let queues: QueueStats[]
      const now = Date.now()
      try {
        queues = await store.stats({ now, recentWindowMs: RECENT_WINDOW_MS })
      } finally {
        await store.close()
      }
      const totals = sumCounts(queues)
      if (flags.json === true) {
        process.stdout.write(
          formatJson({
            at: toIso(now),
            recentWindowMs: RECENT_WINDOW_MS,
            queues: queues.map((stats) => ({ queue: stats.queue, ...pickCounts(stats) })),
            totals,
          }),
        )
        return
      }
      if (queues.length === 0) {
        process.stdout.write('no jobs in the store\n')
        return
      }
      const row = (queue: string, counts: Counts): string[] => [
        queue,
        ...COUNT_KEYS.map((key) => String(counts[key])),
      ]
      const rows = queues.map((stats) => row(stats.queue, stats))
      if (queues.length > 1) rows.push(row('(all)', totals))
      process.stdout.write(
        formatTable(
          ['QUEUE', 'READY', 'SCHEDULED', 'ACTIVE', 'COMPLETED', 'DEAD', 'COMPLETED/MIN', 'DEAD/MIN'],
          rows,
          ['left', ...COUNT_KEYS.map(() => 'right' as const)],
        ),
      )
    })
}

function pickCounts(stats: Counts): Counts {
  return Object.fromEntries(COUNT_KEYS.map((key) => [key, stats[key]])) as Counts
}

function sumCounts(queues: readonly QueueStats[]): Counts {
  const totals = Object.fromEntries(COUNT_KEYS.map((key) => [key, 0])) as Counts
  for (const stats of queues) for (const key of COUNT_KEYS) totals[key] += stats[key]
  return totals
}
