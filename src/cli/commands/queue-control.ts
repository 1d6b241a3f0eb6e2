import type { Command } from 'commander'
import { hostname, userInfo } from 'node:os'
import { limitQueue, listQueueControls, pauseQueue, resumeQueue } from '../../admin/queue-control.js'
import { withStore } from '../../admin/with-store.js'
import { ValidationError } from '../../core/errors.js'
import { assertName, parseInteger } from '../../core/validate.js'
import { QUEUE_LIMIT_MAX } from '../../store/params.js'
import type { QueueControl, QueueLimitChange } from '../../store/store.js'
import { formatInstant, formatJson, formatTable, toIso } from '../format.js'
import { existingStore } from '../open.js'

/** `ferry pause`, `resume`, `limit` and `limits`: queue control (docs/queue-control.md). */
export function registerQueueControl(program: Command): void {
  program
    .command('pause')
    .description("stop every worker, in any process, from claiming a queue's jobs until it is resumed")
    .argument('<queue>', 'the queue')
    .option('--reason <text>', 'why, shown by `ferry limits` and `ferry stats`')
    .option('--by <who>', 'who paused it (default: user@host)')
    .action(async (queue: string, flags: { reason?: string; by?: string }) => {
      assertName(queue, 'queue')
      const by = flags.by ?? whoAmI()
      const control = await withStore(existingStore(program), (store) =>
        pauseQueue(store, { queue, by, ...(flags.reason === undefined ? {} : { reason: flags.reason }) }),
      )
      process.stdout.write(
        `paused queue ${queue} at ${formatInstant(control.paused!.at, Date.now())}: no worker claims its jobs until \`ferry resume ${queue}\`\n`,
      )
    })

  program
    .command('resume')
    .description('let workers claim the jobs of a paused queue again, and wake those waiting for it')
    .argument('<queue>', 'the queue')
    .action(async (queue: string) => {
      assertName(queue, 'queue')
      await withStore(existingStore(program), (store) => resumeQueue(store, { queue }))
      process.stdout.write(`resumed queue ${queue}\n`)
    })

  program
    .command('limit')
    .description("set or clear a queue's limits, enforced across every worker and process")
    .argument('<queue>', 'the queue')
    .option('--concurrency <n>', 'at most n of its jobs active at once (live leases), across all workers')
    .option('--clear', 'remove every limit of the queue')
    .action(async (queue: string, flags: { concurrency?: string; clear?: boolean }) => {
      assertName(queue, 'queue')
      let change: QueueLimitChange
      if (flags.clear === true) {
        if (flags.concurrency !== undefined) {
          throw new ValidationError('invalid_option', '--clear', 'cannot be given with a limit to set')
        }
        change = { queue, clear: true }
      } else if (flags.concurrency !== undefined) {
        change = {
          queue,
          concurrency: parseInteger(flags.concurrency, '--concurrency', { min: 1, max: QUEUE_LIMIT_MAX }),
        }
      } else {
        throw new ValidationError('invalid_option', '--concurrency', 'give a limit to set, or --clear')
      }
      const control = await withStore(existingStore(program), (store) => limitQueue(store, change))
      process.stdout.write(`queue ${queue}: ${describeLimits(control)}\n`)
    })

  program
    .command('limits')
    .description('the queues that are paused or limited, with when, by whom and why')
    .option('--json', 'print a JSON document (shape in docs/cli.md)')
    .action(async (flags: { json?: boolean }) => {
      const controls = await withStore(existingStore(program), (store) => listQueueControls(store))
      if (flags.json === true) {
        process.stdout.write(
          formatJson(
            controls.map((control) => ({
              ...control,
              paused: control.paused === null ? null : { ...control.paused, at: toIso(control.paused.at) },
            })),
          ),
        )
        return
      }
      if (controls.length === 0) {
        process.stdout.write('no queue is paused or limited\n')
        return
      }
      const now = Date.now()
      process.stdout.write(
        formatTable(
          ['QUEUE', 'PAUSED', 'BY', 'REASON', 'LIMITS'],
          controls.map((control) => [
            control.queue,
            control.paused === null ? '-' : formatInstant(control.paused.at, now),
            control.paused?.by ?? '',
            control.paused?.reason ?? '',
            describeLimits(control),
          ]),
        ),
      )
    })
}

/** 'concurrency 5', or 'no limits'. */
export function describeLimits({ limits }: QueueControl): string {
  return limits.concurrency === null ? 'no limits' : `concurrency ${limits.concurrency}`
}

/** Who runs this command, for a pause's record: user@host. */
function whoAmI(): string {
  let user: string
  try {
    user = userInfo().username
  } catch {
    user = process.env.USER ?? 'unknown'
  }
  return `${user}@${hostname()}`
}
