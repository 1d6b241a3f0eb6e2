import type { Command } from 'commander'
import { countOf } from '../format.js'
import { parseJobIds } from '../job-ids.js'
import { openExistingStore } from '../open.js'

export function registerCancel(program: Command): void {
  program
    .command('cancel')
    .description('end scheduled, ready or active jobs as dead (finished and unknown ids are skipped)')
    .argument('<ids...>', 'job ids')
    .action(async (ids: string[]) => {
      const jobIds = parseJobIds(ids, 'ids')
      const store = await openExistingStore(program)
      try {
        const cancelledCount = await store.cancel({ ids: jobIds })
        process.stdout.write(`${countOf(cancelledCount, 'job')} cancelled\n`)
      } finally {
        await store.close()
      }
    })
}
