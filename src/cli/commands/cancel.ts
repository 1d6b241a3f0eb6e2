import type { Command } from 'commander'
import { assertJobIds } from '../../admin/job-ids.js'
import { cancelJobs } from '../../admin/manage.js'
import { withStore } from '../../admin/with-store.js'
import { countOf } from '../format.js'
import { existingStore } from '../open.js'

export function registerCancel(program: Command): void {
  program
    .command('cancel')
    .description('end scheduled, ready or active jobs as dead (finished and unknown ids are skipped)')
    .argument('<ids...>', 'job ids')
    .action(async (ids: string[]) => {
      // Checked before the store is opened, as every flag is: a typo needs no connection to report.
      assertJobIds(ids, 'ids')
      const { cancelledCount } = await withStore(existingStore(program), (store) =>
        cancelJobs(store, { ids }),
      )
      process.stdout.write(`${countOf(cancelledCount, 'job')} cancelled\n`)
    })
}
