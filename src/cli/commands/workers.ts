import type { Command } from 'commander'
import { withStore } from '../../admin/with-store.js'
import { listWorkers } from '../../admin/workers.js'
import { formatDuration, formatJson, formatTable, toIso } from '../format.js'
import { existingStore } from '../open.js'

export function registerWorkers(program: Command): void {
  program
    .command('workers')
    .description(
      'the running workers: host, pid, queues, concurrency, strategy, jobs running, last heartbeat',
    )
    .option('--json', 'print a JSON document (shape in docs/cli.md)')
    .action(async (flags: { json?: boolean }) => {
      const report = await withStore(existingStore(program), (store) => listWorkers(store))
      if (flags.json === true) {
        process.stdout.write(
          formatJson({
            at: toIso(report.at),
            workers: report.workers.map((worker) => ({
              ...worker,
              startedAt: toIso(worker.startedAt),
              heartbeatAt: toIso(worker.heartbeatAt),
              jobs: worker.jobs.map((job) => ({ ...job, startedAt: toIso(job.startedAt) })),
            })),
          }),
        )
        return
      }
      if (report.workers.length === 0) {
        process.stdout.write('no workers running\n')
        return
      }
      process.stdout.write(
        formatTable(
          ['HOST', 'PID', 'QUEUES', 'CONCURRENCY', 'STRATEGY', 'ACTIVE', 'HEARTBEAT', 'WORKER'],
          report.workers.map((worker) => [
            worker.host,
            String(worker.pid),
            worker.queues.join(','),
            String(worker.concurrency),
            worker.strategy,
            String(worker.activeCount),
            // The store's clock against this host's: a skew of a second or two shows as such.
            `${formatDuration(Math.max(0, report.at - worker.heartbeatAt))} ago`,
            worker.workerId,
          ]),
          ['left', 'right', 'left', 'right', 'left', 'right', 'right', 'left'],
        ),
      )
    })
}
