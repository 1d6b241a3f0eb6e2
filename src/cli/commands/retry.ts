import type { Command } from 'commander'
import { assertJobIds } from '../../admin/job-ids.js'
import { retryJobs } from '../../admin/manage.js'
import { withStore } from '../../admin/with-store.js'
import { assertName } from '../../core/validate.js'
import type { RetryParams } from '../../store/store.js'
import { countOf } from '../format.js'
import { existingStore } from '../open.js'

export function registerRetry(program: Command): void {
  program
    .command('retry')
    .description('move dead jobs back to ready with fresh attempts: the ones given, or --all-dead')
    .argument('[ids...]', 'ids of dead jobs (other ids are skipped)')
    .option('--all-dead', 'every dead job (of --queue, if given)')
    .option('--queue <queue>', 'with --all-dead: only this queue')
    .action(async (ids: string[], flags: { allDead?: boolean; queue?: string }, command: Command) => {
      const allDead = flags.allDead === true
      if (allDead && ids.length > 0) command.error('error: give job ids or --all-dead, not both')
      if (flags.queue !== undefined && !allDead) command.error('error: --queue goes with --all-dead')
      if (!allDead && ids.length === 0) command.error('error: give the ids of jobs to retry, or --all-dead')
      // Checked before the store is opened, as every flag is: a typo needs no connection to report.
      if (!allDead) assertJobIds(ids, 'ids')
      const params: RetryParams = allDead ? { allDead } : { ids }
      if (flags.queue !== undefined) {
        assertName(flags.queue, '--queue')
        params.queue = flags.queue
      }
      const { movedCount } = await withStore(existingStore(program), (store) => retryJobs(store, params))
      process.stdout.write(`${countOf(movedCount, 'job')} moved back to ready\n`)
    })
}
