#!/usr/bin/env node
// The `ferry` command. One file per subcommand in ./commands; this file only wires them up.
import { Command, CommanderError } from 'commander'
import { readFileSync } from 'node:fs'
import { FerryError } from '../core/errors.js'
import { DEFAULT_STORE_URL } from '../store/open-store.js'
import { registerCancel } from './commands/cancel.js'
import { registerDashboard } from './commands/dashboard.js'
import { registerDemo } from './commands/demo.js'
import { registerEnqueue } from './commands/enqueue.js'
import { registerEvents } from './commands/events.js'
import { registerJobs } from './commands/jobs.js'
import { registerMigrate } from './commands/migrate.js'
import { registerPurge } from './commands/purge.js'
import { registerQueueControl } from './commands/queue-control.js'
import { registerRetention } from './commands/retention.js'
import { registerRetry } from './commands/retry.js'
import { registerSchedules } from './commands/schedules.js'
import { registerStats } from './commands/stats.js'
import { registerStopWorkers } from './commands/stop-workers.js'
import { registerWork } from './commands/work.js'
import { registerWorkers } from './commands/workers.js'
import { exitWhenStdoutReaderLeaves, ferryStderr } from './fd-writer.js'
import { painter } from './format.js'

// package.json is two levels up from both src/cli/main.ts and dist/cli/main.js, and ships in the package.
const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string
}
const paint = painter(process.stderr)

const program = new Command('ferry')
  .description('Ferry: a durable background-job queue')
  .option(
    '--store <url>',
    'where jobs are kept (env FERRY_STORE)',
    process.env.FERRY_STORE ?? DEFAULT_STORE_URL,
  )
  .version(version, '-V, --version', "print Ferry's version")
  .configureOutput({
    // Coloured up to the newline, so the colour ends on the line it starts on.
    outputError: (text, write) =>
      write(text.replace(/^(.*?)(\n?)$/s, (_, body: string, end: string) => paint(body, 'red') + end)),
  })
  .showHelpAfterError()
  .exitOverride()

registerDemo(program)
registerWork(program)
registerMigrate(program)
registerEnqueue(program)
registerEvents(program)
registerStats(program)
registerWorkers(program)
registerJobs(program)
registerRetry(program)
registerCancel(program)
registerPurge(program)
registerStopWorkers(program)
registerQueueControl(program)
registerRetention(program)
registerSchedules(program)
registerDashboard(program)

// `ferry jobs --json | head -1`: the reader is gone, which is no error of ours (`ferry work` opts out).
exitWhenStdoutReaderLeaves()

try {
  await program.parseAsync(process.argv)
} catch (error) {
  if (error instanceof CommanderError) process.exit(error.exitCode)
  if (error instanceof FerryError) {
    ferryStderr.line(paint(`ferry: ${error.message} [${error.code}]`, 'red'))
    process.exit(2)
  }
  throw error
}
