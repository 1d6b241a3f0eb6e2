import type { Command } from 'commander'
import { openStore } from '../../store/open-store.js'

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description("bring the store's schema up to date (opening a store also does this)")
    .action(async () => {
      const store = await openStore(program.opts<{ store: string }>().store)
      try {
        const { fromVersion, toVersion, applied } = await store.migrate()
        process.stdout.write(
          applied.length === 0
            ? `schema is up to date (version ${toVersion})\n`
            : `migrated from version ${fromVersion} to ${toVersion}: ${applied.join(', ')}\n`,
        )
      } finally {
        await store.close()
      }
    })
}
