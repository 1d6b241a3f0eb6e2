import type { Command } from 'commander'
import { hostname, userInfo } from 'node:os'
import { limitQueue, listQueueControls, pauseQueue, resumeQueue } from '../../admin/queue-control.js'
import { withStore } from '../../admin/with-store.js'
import { ValidationError } from '../../core/errors.js'
import { assertName, parseInteger } from '../../core/validate.js'
import { parseDuration } from '../../core/duration.js'
import { QUEUE_LIMIT_MAX, RATE_WINDOW_MAX_MS } from '../../store/params.js'
import type { QueueControl, QueueLimitChange, RateLimit } from '../../store/store.js'
import { formatDuration, formatInstant, formatJson, formatTable, toIso } from '../format.js'
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

  // The rate options and their windows in the order given: each --per goes with the rate before it.
  const rateOrder: string[] = []
  program
    .command('limit')
    .description("set or clear a queue's limits, enforced across every worker and process")
    .argument('<queue>', 'the queue')
    .option('--concurrency <n>', 'at most n of its jobs active at once (live leases), across all workers')
    .option('--rate <n>', 'at most n of its jobs start in any window of --per (a sliding window)')
    .option('--group-concurrency <n>', 'at most n active jobs of each group (the `group` of a job)')
    .option('--group-rate <n>', 'at most n starts of each group in any window of --per')
    .option(
      '--per <duration>',
      'the window of the --rate or --group-rate before it (e.g. 1s, 1m)',
      collect,
      [],
    )
    .option('--clear', 'remove every limit of the queue')
    .addHelpText('after', LIMIT_HELP)
    .on('option:rate', () => rateOrder.push('--rate'))
    .on('option:group-rate', () => rateOrder.push('--group-rate'))
    .on('option:per', () => rateOrder.push('--per'))
    .action(async (queue: string, flags: LimitFlags) => {
      assertName(queue, 'queue')
      const change = limitChangeOf(queue, flags, rateOrder)
      const control = await withStore(existingStore(program), (store) => limitQueue(store, change))
      process.stdout.write(`queue ${queue}: ${describeLimits(control)}\n`)
    })

  program
    .command('limits')
    .description('the queues that are paused or limited, with when, by whom and why')
    .option('--json', 'print a JSON document (shape in docs/cli.md)')
    .action(async (flags: { json?: boolean }) => {
      const controls = (await withStore(existingStore(program), (store) => listQueueControls(store))).filter(
        isPausedOrLimited,
      )
      if (flags.json === true) {
        process.stdout.write(
          formatJson(
            controls.map(({ queue, paused, limits }) => ({
              queue,
              paused: paused === null ? null : { ...paused, at: toIso(paused.at) },
              limits,
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

const LIMIT_HELP = `
Each limit given replaces that limit only; "none" removes it (e.g. --rate none). --per belongs to
the --rate or --group-rate just before it:
  ferry limit email --concurrency 5 --rate 100 --per 1m
  ferry limit api --group-concurrency 2 --group-rate 10 --per 1s
`

interface LimitFlags {
  concurrency?: string
  rate?: string
  groupConcurrency?: string
  groupRate?: string
  per: string[]
  clear?: boolean
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value]
}

/** The options that set a limit, with the flag each is given as. */
const LIMIT_FLAGS = [
  ['concurrency', '--concurrency'],
  ['rate', '--rate'],
  ['groupConcurrency', '--group-concurrency'],
  ['groupRate', '--group-rate'],
] as const

/**
 * The change `ferry limit` asks for. Each --per goes with the --rate or --group-rate written before
 * it: `args` lists those three options in the order given (commander's option events).
 */
export function limitChangeOf(queue: string, flags: LimitFlags, args: readonly string[]): QueueLimitChange {
  const given = LIMIT_FLAGS.filter(([key]) => flags[key] !== undefined)
  if (flags.clear === true) {
    if (given.length > 0 || flags.per.length > 0) {
      throw new ValidationError('invalid_option', '--clear', 'cannot be given with a limit to set')
    }
    return { queue, clear: true }
  }
  if (given.length === 0) {
    throw new ValidationError(
      'invalid_option',
      '--concurrency',
      'give a limit to set (--concurrency, --rate, --group-concurrency, --group-rate), or --clear',
    )
  }
  const windows = rateWindows(flags, args)
  const change: QueueLimitChange = { queue }
  for (const [key, flag] of LIMIT_FLAGS) {
    const text = flags[key]
    if (text === undefined) continue
    const value = text.trim() === 'none' ? null : parseInteger(text, flag, { min: 1, max: QUEUE_LIMIT_MAX })
    if (key === 'rate' || key === 'groupRate') {
      const perMs = windows[key]
      if (value !== null && perMs === undefined) {
        throw new ValidationError(
          'invalid_option',
          '--per',
          `${flag} ${text} needs a window: add --per <duration> after it, e.g. --per 1s`,
        )
      }
      change[key] = value === null ? null : { limit: value, perMs: perMs! }
    } else {
      change[key] = value
    }
  }
  return change
}

/** Which rate each --per is the window of, in milliseconds. */
function rateWindows(flags: LimitFlags, args: readonly string[]): { rate?: number; groupRate?: number } {
  const windows: { rate?: number; groupRate?: number } = {}
  let current: 'rate' | 'groupRate' | undefined
  let pers = 0
  for (const arg of args) {
    if (arg === '--') break
    const name = arg.split('=', 1)[0]
    if (name === '--rate') current = 'rate'
    else if (name === '--group-rate') current = 'groupRate'
    else if (name === '--per') {
      const text = flags.per[pers++]!
      if (current === undefined) {
        throw new ValidationError(
          'invalid_option',
          '--per',
          'goes after the --rate or --group-rate it is the window of',
        )
      }
      if (windows[current] !== undefined) {
        throw new ValidationError(
          'invalid_option',
          '--per',
          `given twice for ${current === 'rate' ? '--rate' : '--group-rate'}`,
        )
      }
      const perMs = parseDuration(text, '--per')
      if (perMs < 1 || perMs > RATE_WINDOW_MAX_MS) {
        throw new ValidationError('invalid_option', '--per', `"${text}" must be from 1ms to 1d`)
      }
      windows[current] = perMs
    }
  }
  return windows
}

/** Whether a queue is paused or limited: one whose only setting is its retention is neither. */
export function isPausedOrLimited(control: QueueControl): boolean {
  return control.paused !== null || describeLimits(control) !== 'no limits'
}

/** 'concurrency 5, rate 100/1m, group concurrency 2', or 'no limits'. */
export function describeLimits({ limits }: Pick<QueueControl, 'limits'>): string {
  const parts: string[] = []
  if (limits.concurrency !== null) parts.push(`concurrency ${limits.concurrency}`)
  if (limits.rate !== null) parts.push(`rate ${describeRate(limits.rate)}`)
  if (limits.groupConcurrency !== null) parts.push(`group concurrency ${limits.groupConcurrency}`)
  if (limits.groupRate !== null) parts.push(`group rate ${describeRate(limits.groupRate)}`)
  return parts.length === 0 ? 'no limits' : parts.join(', ')
}

function describeRate({ limit, perMs }: RateLimit): string {
  return `${limit}/${formatDuration(perMs)}`
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
