import type { Command } from 'commander'
import { openStore } from '../../store/open-store.js'
import { countOf } from '../format.js'

export function registerCancel(program: Command): void {
  program
    .command('cancel')
    .description('end scheduled, ready or active jobs as dead (finished and unknown ids are skipped)')
    .argument('<ids...>', 'job ids')
    .action(async (ids: string[]) => {
      const store = await openStore(program.opts<{ store: string }>().store)
      try {
        const cancelledCount = await store.cancel({ ids })
        process.stdout.write(`${countOf(cancelledCount, 'job')} cancelled\n`)
      } finally {
        await store.close()
      }
    })
}
