// How the subcommands open the store named by --store. Two kinds of command:
// - enqueue, work and demo write jobs: a missing SQLite file is created, and a store whose
//   settings can lose acknowledged jobs (Redis without an fsynced append-only file) is warned
//   about, in one line of Ferry's own, once per process.
// - stats, jobs, retry, cancel, purge and stop-workers look at or change jobs that exist: they
//   open an existing store only, so a mistyped SQLite path is an error rather than a new, empty
//   database, and they print no durability warnings, since they enqueue nothing.
// Each command runs its body through withStore with one of these targets, so the store is closed
// however the command ends. `ferry migrate` goes through migrateStore, which creates what is missing.
import type { Command } from 'commander'
import type { StoreTarget } from '../admin/with-store.js'
import { ferryStderr } from './fd-writer.js'
import { painter } from './format.js'

const warned = new Set<string>()

function warnOnce(message: string): void {
  if (warned.has(message)) return
  warned.add(message)
  ferryStderr.line(`${painter(process.stderr)('ferry: warning:', 'yellow')} ${message}`)
}

/** The --store URL (or FERRY_STORE, or the default), which main.ts defines on the program. */
export function storeUrl(program: Command): string {
  return program.opts<{ store: string }>().store
}

/** For the commands that write jobs: creates a missing store, warns about unsafe durability. */
export function storeForJobs(program: Command): StoreTarget {
  return { url: storeUrl(program), options: { onWarning: warnOnce } }
}

/** For the commands that read or change existing jobs: a missing SQLite file is an error. */
export function existingStore(program: Command): StoreTarget {
  return { url: storeUrl(program), options: { create: false, onWarning: () => {} } }
}
