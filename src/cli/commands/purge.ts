import type { Command } from 'commander'
import { purgeJobs } from '../../admin/manage.js'
import { withStore } from '../../admin/with-store.js'
import { parseDuration } from '../../core/duration.js'
import { ValidationError } from '../../core/errors.js'
import { assertName } from '../../core/validate.js'
import type { PurgeParams } from '../../store/store.js'
import { countOf } from '../format.js'
import { existingStore } from '../open.js'

export function registerPurge(program: Command): void {
  program
    .command('purge')
    .description('delete finished jobs: completed or dead ones')
    .requiredOption('--state <state>', 'completed or dead')
    .option('--older-than <duration>', 'only jobs that finished at least this long ago: 1h, 7d, 4w')
    .option('--queue <queue>', 'only jobs of this queue')
    .action(async (flags: { state: string; olderThan?: string; queue?: string }) => {
      if (flags.state !== 'completed' && flags.state !== 'dead') {
        throw new ValidationError(
          'invalid_option',
          '--state',
          `"${flags.state}" cannot be purged (use completed or dead)`,
        )
      }
      const params: PurgeParams = { state: flags.state }
      if (flags.olderThan !== undefined) params.olderThanMs = parseDuration(flags.olderThan, '--older-than')
      if (flags.queue !== undefined) {
        assertName(flags.queue, '--queue')
        params.queue = flags.queue
      }
      const { deletedCount } = await withStore(existingStore(program), (store) => purgeJobs(store, params))
      process.stdout.write(`${countOf(deletedCount, 'job')} deleted\n`)
    })
}
