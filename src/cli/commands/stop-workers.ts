import type { Command } from 'commander'
import { formatInstant } from '../format.js'
import { openExistingStore } from '../open.js'

export function registerStopWorkers(program: Command): void {
  program
    .command('stop-workers')
    .description('ask every running worker, in any process, to stop after its current jobs')
    .action(async () => {
      const store = await openExistingStore(program)
      try {
        // The store's answer rather than our own clock: it keeps the latest request if one is newer.
        const requestedAt = (await store.control({ requestStop: true })).stopRequestedAt!
        process.stdout.write(
          `stop requested at ${formatInstant(requestedAt, Date.now())}: workers started before then will stop after their current jobs\n`,
        )
      } finally {
        await store.close()
      }
    })
}
