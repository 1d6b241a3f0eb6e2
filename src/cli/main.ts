#!/usr/bin/env node
// The `ferry` command. One file per subcommand in ./commands; this file only wires them up.
import { Command, CommanderError } from 'commander'
import { FerryError } from '../core/errors.js'
import { DEFAULT_STORE_URL } from '../store/open-store.js'
import { registerCancel } from './commands/cancel.js'
import { registerDemo } from './commands/demo.js'
import { registerEnqueue } from './commands/enqueue.js'
import { registerJobs } from './commands/jobs.js'
import { registerMigrate } from './commands/migrate.js'
import { registerPurge } from './commands/purge.js'
import { registerRetry } from './commands/retry.js'
import { registerStats } from './commands/stats.js'
import { registerStopWorkers } from './commands/stop-workers.js'
import { registerWork } from './commands/work.js'
import { exitWhenStdoutReaderLeaves, ferryStderr } from './fd-writer.js'

const program = new Command('ferry')
  .description('Ferry: a durable background-job queue')
  .option(
    '--store <url>',
    'where jobs are kept (env FERRY_STORE)',
    process.env.FERRY_STORE ?? DEFAULT_STORE_URL,
  )
  .showHelpAfterError()
  .exitOverride()

registerDemo(program)
registerWork(program)
registerMigrate(program)
registerEnqueue(program)
registerStats(program)
registerJobs(program)
registerRetry(program)
registerCancel(program)
registerPurge(program)
registerStopWorkers(program)

// `ferry jobs --json | head -1`: the reader is gone, which is no error of ours (`ferry work` opts out).
exitWhenStdoutReaderLeaves()

try {
  await program.parseAsync(process.argv)
} catch (error) {
  if (error instanceof CommanderError) process.exit(error.exitCode)
  if (error instanceof FerryError) {
    ferryStderr.line(`ferry: ${error.message} [${error.code}]`)
    process.exit(2)
  }
  throw error
}
