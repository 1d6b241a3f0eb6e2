import type { Command } from 'commander'
import { getQueueRetention, setQueueRetention, type RetentionReport } from '../../admin/queue-control.js'
import { withStore } from '../../admin/with-store.js'
import { ValidationError } from '../../core/errors.js'
import { parseDuration } from '../../core/duration.js'
import { assertName, KEEP_MAX_MS, parseInteger } from '../../core/validate.js'
import { RETENTION_COUNT_MAX } from '../../store/params.js'
import type { QueueRetention, QueueRetentionChange } from '../../store/store.js'
import { formatDuration, formatJson } from '../format.js'
import { existingStore } from '../open.js'

/** `ferry retention`: how long a queue keeps its finished jobs (docs/retention.md). */
export function registerRetention(program: Command): void {
  program
    .command('retention')
    .description('show or set how long a queue keeps its completed and dead jobs before workers delete them')
    .argument('<queue>', 'the queue')
    .option(
      '--completed <duration>',
      'keep completed jobs this long after they finish (e.g. 12h, 7d), or forever',
    )
    .option('--dead <duration>', 'keep dead jobs this long after they finish, or forever')
    .option('--completed-count <n>', 'keep at most the newest n completed jobs, or none for no count limit')
    .option('--dead-count <n>', 'keep at most the newest n dead jobs, or none for no count limit')
    .option('--clear', 'put back every default (completed 1d, dead 14d, no count limit)')
    .option('--json', 'print a JSON document (shape in docs/cli.md)')
    .addHelpText('after', RETENTION_HELP)
    .action(async (queue: string, flags: RetentionFlags) => {
      assertName(queue, 'queue')
      const change = retentionChangeOf(queue, flags)
      const report = await withStore(existingStore(program), (store) =>
        change === null ? getQueueRetention(store, queue) : setQueueRetention(store, change),
      )
      process.stdout.write(
        flags.json === true ? formatJson(retentionToJson(report)) : describeRetention(report),
      )
    })
}

const RETENTION_HELP = `
Each setting given replaces that one only; "default" puts back its default. Workers delete what a
queue no longer keeps about once a minute, a batch at a time. \`ferry purge\` deletes at once.
  ferry retention email --completed 2h --dead 30d
  ferry retention audit --completed forever --dead-count 10000
`

interface RetentionFlags {
  completed?: string
  dead?: string
  completedCount?: string
  deadCount?: string
  clear?: boolean
  json?: boolean
}

/** The settings, each with the flag it is given as and whether it is an age or a count. */
const RETENTION_FLAGS = [
  ['completedMs', '--completed', 'age'],
  ['deadMs', '--dead', 'age'],
  ['completedCount', '--completed-count', 'count'],
  ['deadCount', '--dead-count', 'count'],
] as const

const FLAG_KEYS = {
  completedMs: 'completed',
  deadMs: 'dead',
  completedCount: 'completedCount',
  deadCount: 'deadCount',
} as const satisfies Record<keyof QueueRetention, keyof RetentionFlags>

/** The change the flags ask for; null when they ask for none (the command shows the retention). */
export function retentionChangeOf(queue: string, flags: RetentionFlags): QueueRetentionChange | null {
  const given = RETENTION_FLAGS.filter(([key]) => flags[FLAG_KEYS[key]] !== undefined)
  if (flags.clear === true) {
    if (given.length > 0) {
      throw new ValidationError('invalid_option', '--clear', 'cannot be given with a setting to change')
    }
    return { queue, clear: true }
  }
  if (given.length === 0) return null
  const change: QueueRetentionChange = { queue }
  for (const [key, flag, kind] of given) {
    const text = flags[FLAG_KEYS[key]]!.trim()
    change[key] = kind === 'age' ? parseAge(text, flag) : parseCount(text, flag)
  }
  return change
}

function parseAge(text: string, flag: string): number | null {
  if (text === 'default') return null
  if (text === 'forever') return Infinity
  const ms = parseDuration(text, flag)
  if (ms > KEEP_MAX_MS) {
    throw new ValidationError('invalid_option', flag, `"${text}" is longer than 100 years: use forever`)
  }
  return ms
}

function parseCount(text: string, flag: string): number | null {
  if (text === 'none' || text === 'default') return null
  return parseInteger(text, flag, { min: 0, max: RETENTION_COUNT_MAX })
}

const LABELS: Record<keyof QueueRetention, string> = {
  completedMs: 'completed jobs',
  deadMs: 'dead jobs',
  completedCount: 'completed count',
  deadCount: 'dead count',
}

/** What `ferry retention` prints: a line per setting, what it keeps, and whether that is the default. */
export function describeRetention({ queue, keeps, set }: RetentionReport): string {
  const width = Math.max(...Object.values(LABELS).map((label) => label.length))
  const lines = RETENTION_FLAGS.map(([key, , kind]) => {
    const value = keeps[key]
    const text =
      kind === 'age'
        ? value === Infinity
          ? 'forever'
          : `${formatDuration(value!)} after they finish`
        : value === null
          ? 'no limit'
          : `the newest ${value}`
    return `  ${LABELS[key].padEnd(width)}  ${text}${set[key] === null ? ' (default)' : ''}\n`
  })
  return `queue ${queue} keeps:\n${lines.join('')}`
}

/** The --json form: what the queue keeps (ages in ms, or "forever"), and which are defaults. */
function retentionToJson({ queue, keeps, set }: RetentionReport): Record<string, unknown> {
  const age = (ms: number | null): number | string | null => (ms === Infinity ? 'forever' : ms)
  return {
    queue,
    completedMs: age(keeps.completedMs),
    deadMs: age(keeps.deadMs),
    completedCount: keeps.completedCount,
    deadCount: keeps.deadCount,
    defaults: RETENTION_FLAGS.map(([key]) => key).filter((key) => set[key] === null),
  }
}
