import type { Command } from 'commander'
import { assertName } from '../../core/validate.js'
import type { RetryParams } from '../../store/store.js'
import { countOf } from '../format.js'
import { parseJobIds } from '../job-ids.js'
import { openExistingStore } from '../open.js'

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
      const params: RetryParams = allDead ? { allDead } : { ids: parseJobIds(ids, 'ids') }
      if (flags.queue !== undefined) {
        assertName(flags.queue, '--queue')
        params.queue = flags.queue
      }
      const store = await openExistingStore(program)
      try {
        const movedCount = await store.retry(params)
        process.stdout.write(`${countOf(movedCount, 'job')} moved back to ready\n`)
      } finally {
        await store.close()
      }
    })
}
