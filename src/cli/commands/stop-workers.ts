import type { Command } from 'commander'
import { stopWorkers } from '../../admin/manage.js'
import { withStore } from '../../admin/with-store.js'
import { formatInstant } from '../format.js'
import { existingStore } from '../open.js'

export function registerStopWorkers(program: Command): void {
  program
    .command('stop-workers')
    .description('ask every running worker, in any process, to stop after its current jobs')
    .action(async () => {
      const { stopRequestedAt } = await withStore(existingStore(program), (store) => stopWorkers(store))
      process.stdout.write(
        `stop requested at ${formatInstant(stopRequestedAt, Date.now())}: workers started before then will stop after their current jobs\n`,
      )
    })
}
