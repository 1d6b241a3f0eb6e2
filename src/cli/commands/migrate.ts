import type { Command } from 'commander'
import { migrateStore } from '../../store/open-store.js'
import { storeUrl } from '../open.js'

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description("bring the store's schema up to date and say what was applied (creates a missing store)")
    .action(async () => {
      // Not through openStore, which would migrate before we could see what needed it.
      const { fromVersion, toVersion, applied } = await migrateStore(storeUrl(program))
      process.stdout.write(
        applied.length === 0
          ? `schema is up to date (version ${toVersion}): nothing to apply\n`
          : `migrated from version ${fromVersion} to ${toVersion}, applied: ${applied.join(', ')}\n`,
      )
    })
}
