import type { Command } from 'commander'
import { createClient } from '../../client/client.js'
import { parseDuration } from '../../core/duration.js'
import { ValidationError } from '../../core/errors.js'
import type { EnqueueOptions } from '../../core/validate.js'
import { openStore } from '../../store/open-store.js'

interface EnqueueFlags {
  queue?: string
  priority?: string
  delay?: string
  maxAttempts?: string
  uniqueKey?: string
}

export function registerEnqueue(program: Command): void {
  program
    .command('enqueue')
    .description('enqueue one job; prints its id once it is durably stored')
    .argument('<name>', 'job name (the handler that runs it)')
    .argument('[payload-json]', 'the payload, as JSON', 'null')
    .option('--queue <queue>', 'queue name (default "default")')
    .option('--priority <n>', 'integer, higher runs first (default 0)')
    .option('--delay <duration>', 'run no earlier than this from now: 500ms, 5s, 10m, 2h, 1d')
    .option('--max-attempts <n>', 'attempts before the job is dead (default 25)')
    .option('--unique-key <key>', 'if a job with this key exists, print its id and add nothing')
    .action(async (name: string, payloadJson: string, flags: EnqueueFlags) => {
      let payload: unknown
      try {
        payload = JSON.parse(payloadJson)
      } catch (error) {
        throw new ValidationError(
          'invalid_payload',
          'payload-json',
          `is not valid JSON: ${(error as Error).message}`,
        )
      }
      const options: EnqueueOptions = {}
      if (flags.queue !== undefined) options.queue = flags.queue
      if (flags.priority !== undefined) options.priority = toNumber(flags.priority)
      if (flags.delay !== undefined) options.delayMs = parseDuration(flags.delay, '--delay')
      if (flags.maxAttempts !== undefined) options.maxAttempts = toNumber(flags.maxAttempts)
      if (flags.uniqueKey !== undefined) options.uniqueKey = flags.uniqueKey

      const store = await openStore(program.opts<{ store: string }>().store)
      try {
        const { id } = await createClient({ store }).enqueue(name, payload, options)
        process.stdout.write(`${id}\n`)
      } finally {
        await store.close()
      }
    })
}

/** Leaves the range and integer checks to validation, which names the option in its error. */
function toNumber(text: string): number {
  return text.trim() === '' ? NaN : Number(text)
}
