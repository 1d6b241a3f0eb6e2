import type { Command } from 'commander'
import { getJob } from '../../admin/inspect.js'
import { withStore } from '../../admin/with-store.js'
import { createClient, type Client, type JobSpec } from '../../client/client.js'
import { parseDuration } from '../../core/duration.js'
import { FerryError, JobWaitError, ValidationError } from '../../core/errors.js'
import { DEFAULT_MAX_PAYLOAD_BYTES, type UniqueUntil } from '../../core/job.js'
import { normalizeJob, type EnqueueOptions } from '../../core/validate.js'
import { assertKnownKeys } from '../../core/option-keys.js'
import type { EnqueueResult } from '../../store/store.js'
import { ferryStderr } from '../fd-writer.js'
import { countOf, painter, truncate } from '../format.js'
import { LineSplitter } from '../line-splitter.js'
import { storeForJobs } from '../open.js'

interface EnqueueFlags {
  queue?: string
  priority?: string
  delay?: string
  runAt?: string
  maxAttempts?: string
  timeout?: string
  uniqueKey?: string
  uniqueUntil?: string
  uniqueFor?: string
  debounce?: string
  group?: string
  expiresIn?: string
  keepFor?: string
  stdin?: boolean
  wait?: boolean
}

/** The one-job flags, which --stdin refuses: each line carries its own options. */
const ONE_JOB_FLAGS: readonly [keyof EnqueueFlags, string][] = [
  ['queue', '--queue'],
  ['priority', '--priority'],
  ['delay', '--delay'],
  ['runAt', '--run-at'],
  ['maxAttempts', '--max-attempts'],
  ['timeout', '--timeout'],
  ['uniqueKey', '--unique-key'],
  ['uniqueUntil', '--unique-until'],
  ['uniqueFor', '--unique-for'],
  ['debounce', '--debounce'],
  ['group', '--group'],
  ['expiresIn', '--expires-in'],
  ['keepFor', '--keep-for'],
]

export function registerEnqueue(program: Command): void {
  program
    .command('enqueue')
    .description(
      'enqueue one job, or with --stdin one job per JSON line; prints each id once it is durably stored',
    )
    .argument('[name]', 'job name (the handler that runs it)')
    .argument('[payload-json]', 'the payload, as JSON (default null)')
    .option('--queue <queue>', 'queue name (default "default")')
    .option('--priority <n>', 'integer, higher runs first (default 0)')
    .option('--delay <duration>', 'run no earlier than this from now: 500ms, 5s, 10m, 2h, 1d')
    .option('--run-at <instant>', 'run no earlier than this: ISO 8601 (2030-01-31T09:00:00Z) or epoch ms')
    .option('--max-attempts <n>', 'attempts before the job is dead (default 25)')
    .option(
      '--timeout <duration>',
      "time limit per attempt: 30s, 5m (default: the worker's); with --wait, how long to wait instead",
    )
    .option('--unique-key <key>', 'if a job holds this key, print its id and add nothing')
    .option(
      '--unique-until <mode>',
      'when the key frees: purged (the default), finished (completed or dead) or started',
    )
    .option(
      '--unique-for <duration>',
      'throttle: the key holds this long from now, whatever the job does: 10s, 1h',
    )
    .option(
      '--debounce <duration>',
      'run this long from now; enqueued again with the key before it starts, the job takes the new payload and waits this long again',
    )
    .option('--group <key>', "the job's group (a tenant, a customer): what per-group limits count")
    .option('--expires-in <duration>', 'if not started within this (from now), the job never runs: 30s, 1h')
    .option(
      '--keep-for <duration>',
      "keep it this long once finished, or forever (default: its queue's retention)",
    )
    .option(
      '--wait',
      'wait for the job to finish and print its result as JSON (exit 1 if it ends dead); Ctrl-C stops waiting',
    )
    .option(
      '--stdin',
      'read one job per line from stdin as JSON: {"name", "payload", ...options} (docs/cli.md)',
    )
    .action(
      async (
        name: string | undefined,
        payloadJson: string | undefined,
        flags: EnqueueFlags,
        command: Command,
      ) => {
        if (flags.stdin === true) {
          if (name !== undefined) command.error('error: --stdin takes no arguments: each line names its job')
          const given = ONE_JOB_FLAGS.find(([key]) => flags[key] !== undefined)
          if (given !== undefined) {
            command.error(`error: ${given[1]} cannot be combined with --stdin: give it in each line instead`)
          }
          if (flags.wait === true)
            command.error('error: --wait waits for one job: it cannot be combined with --stdin')
          await withStore(storeForJobs(program), async (store) => {
            const client = createClient({ store })
            try {
              const { badLineCount } = await enqueueLines(client, process.stdin)
              if (badLineCount > 0) process.exitCode = 1
            } finally {
              await client.close()
            }
          })
          return
        }
        if (name === undefined) command.error("error: missing required argument 'name' (or use --stdin)")
        if (flags.delay !== undefined && flags.runAt !== undefined) {
          command.error('error: give --delay or --run-at, not both')
        }

        const payload = parsePayload(payloadJson ?? 'null', 'payload-json')
        const options: EnqueueOptions = {}
        if (flags.queue !== undefined) options.queue = flags.queue
        if (flags.priority !== undefined) options.priority = toNumber(flags.priority)
        if (flags.delay !== undefined) options.delayMs = parseDuration(flags.delay, '--delay')
        if (flags.runAt !== undefined) options.runAt = parseRunAtFlag(flags.runAt, '--run-at')
        if (flags.maxAttempts !== undefined) options.maxAttempts = toNumber(flags.maxAttempts)
        // With --wait, --timeout is how long to wait: the job's attempts keep the worker's limit.
        const waitTimeoutMs =
          flags.wait === true && flags.timeout !== undefined
            ? parseDuration(flags.timeout, '--timeout')
            : undefined
        if (flags.timeout !== undefined && flags.wait !== true)
          options.timeoutMs = parseDuration(flags.timeout, '--timeout')
        if (flags.uniqueKey !== undefined) options.uniqueKey = flags.uniqueKey
        // Validation names a mode it does not know, with the ones it does.
        if (flags.uniqueUntil !== undefined) options.uniqueUntil = flags.uniqueUntil as UniqueUntil
        if (flags.uniqueFor !== undefined)
          options.uniqueForMs = parseDuration(flags.uniqueFor, '--unique-for')
        if (flags.debounce !== undefined) options.debounceMs = parseDuration(flags.debounce, '--debounce')
        if (flags.group !== undefined) options.group = flags.group
        if (flags.expiresIn !== undefined)
          options.expiresInMs = parseDuration(flags.expiresIn, '--expires-in')
        if (flags.keepFor !== undefined) {
          options.keepForMs =
            flags.keepFor.trim() === 'forever' ? Infinity : parseDuration(flags.keepFor, '--keep-for')
        }

        await withStore(storeForJobs(program), async (store) => {
          const client = createClient({ store })
          const { id, created, debounced } = await client.enqueue(name, payload, options)
          // stdout stays the id either way (scripts read it); the sentence is for the person.
          process.stdout.write(`${id}\n`)
          if (debounced === true) {
            const changed = await getJob(store, { id })
            const when = changed === null ? '' : `, and runs at ${new Date(changed.runAt).toISOString()}`
            ferryStderr.line(
              `ferry: debounced: job ${id} holding unique key ${JSON.stringify(flags.uniqueKey)} took this payload${when}`,
            )
          } else if (!created) {
            const existing = await getJob(store, { id })
            const what = existing === null ? '' : ` (${existing.name}, ${existing.state})`
            ferryStderr.line(
              `ferry: nothing was added: job ${id}${what} already holds unique key ${JSON.stringify(flags.uniqueKey)}`,
            )
          }
          if (flags.wait === true) await waitAndPrint(client, id, waitTimeoutMs)
        })
      },
    )
}

/**
 * `--wait`: prints the job's result as one line of JSON once it completes. A job that ends dead
 * (its error, cancelled, expired) is said on stderr with exit code 1; a wait that the timeout
 * ends, or a job removed, fails as any FerryError does (exit 2). Ctrl-C stops waiting (exit 130).
 */
async function waitAndPrint(client: Client, id: string, timeoutMs: number | undefined): Promise<void> {
  const interrupt = new AbortController()
  const onSignal = (): void => interrupt.abort()
  process.once('SIGINT', onSignal)
  try {
    const result = await client.waitFor(id, { timeoutMs, signal: interrupt.signal })
    process.stdout.write(`${JSON.stringify(result ?? null)}\n`)
  } catch (error) {
    if (!(error instanceof JobWaitError)) throw error
    if (error.code === 'wait_aborted') {
      ferryStderr.line(`ferry: stopped waiting for job ${id} (it goes on)`)
      process.exitCode = 130
    } else if (error.code === 'job_dead' || error.code === 'job_cancelled' || error.code === 'job_expired') {
      ferryStderr.line(painter(process.stderr)(`ferry: ${error.message} [${error.code}]`, 'red'))
      process.exitCode = 1
    } else throw error
  } finally {
    process.off('SIGINT', onSignal)
  }
}

/** Leaves the range and integer checks to validation, which names the option in its error. */
function toNumber(text: string): number {
  return text.trim() === '' ? NaN : Number(text)
}

export function parsePayload(json: string, field: string): unknown {
  try {
    return JSON.parse(json)
  } catch (error) {
    throw new ValidationError('invalid_payload', field, `is not valid JSON: ${(error as Error).message}`)
  }
}

// ── --stdin ──────────────────────────────────────────────────────────────────────────────────

/**
 * The longest line read: a payload at the client's limit (1 MiB of JSON) plus room for the name,
 * the options and their keys (a uniqueKey of 255 characters written as \u escapes is 1,530
 * bytes). A longer line cannot hold a valid job (unless its payload is spelled with much more
 * space than Ferry stores it in), so it is reported as soon as it passes this and the rest of it
 * is read past without being kept: memory stays bounded whatever one line holds.
 */
export const MAX_LINE_BYTES = DEFAULT_MAX_PAYLOAD_BYTES + 64 * 1024
/** Most lines in one enqueueMany call, which is one transaction. */
const BATCH_MAX_LINES = 1000
/**
 * Most bytes of lines in one call. With MAX_BATCHES_IN_FLIGHT, it bounds the jobs held in memory
 * when every line is near MAX_LINE_BYTES; a single line longer than this still makes a batch.
 */
const BATCH_MAX_BYTES = 2 * 1024 * 1024
/** Batches submitted but not yet printed before reading pauses, so a fast producer cannot fill memory. */
const MAX_BATCHES_IN_FLIGHT = 4
const PROGRESS_INTERVAL_MS = 100

const LINE_KEYS = [
  'name',
  'payload',
  'queue',
  'priority',
  'delay',
  'delayMs',
  'runAt',
  'maxAttempts',
  'timeoutMs',
  'uniqueKey',
  'uniqueUntil',
  'uniqueForMs',
  'debounceMs',
  'group',
  'expiresInMs',
  'expiresAt',
  'keepForMs',
] as const
type LineKey = (typeof LINE_KEYS)[number]
/** Keys that go to EnqueueOptions unchanged; null in any of them means "the default", as in the API. */
const PLAIN_OPTION_KEYS = [
  'queue',
  'priority',
  'delayMs',
  'maxAttempts',
  'timeoutMs',
  'uniqueKey',
  'uniqueUntil',
  'uniqueForMs',
  'debounceMs',
  'group',
  'expiresInMs',
  'keepForMs',
] as const

const paintStderr = painter(process.stderr)

/** A line that is not a job; its message follows `line N: `. */
class BadLineError extends Error {}

interface EnqueueLinesResult {
  storedCount: number
  badLineCount: number
}

/**
 * Reads JSON lines and enqueues them in batches: whatever arrived before the event loop turns, up
 * to BATCH_MAX_LINES or BATCH_MAX_BYTES, goes in one enqueueMany call (one transaction). So a slow
 * stream has each line committed at once, and a fast one is committed in large transactions. A
 * batch's ids are printed only once it is committed, and in input order, so a run killed at any
 * moment has printed only ids that are stored. Bad lines are reported on stderr with their number
 * and skipped (a line over MAX_LINE_BYTES as soon as it passes that, the rest of it read past
 * without being kept). After a store failure nothing more is printed and the error is thrown: the
 * printed ids are then those of the leading good lines.
 */
function enqueueLines(client: Client, input: NodeJS.ReadStream): Promise<EnqueueLinesResult> {
  return new Promise((resolve, reject) => {
    const progress = progressLine(process.stderr)
    let batch: JobSpec[] = []
    let batchBytes = 0
    let batchesInFlight = 0
    let flushScheduled = false
    let ended = false
    let failed = false
    let storedCount = 0
    let badLineCount = 0
    // Every batch's printing waits for the batches before it: ids come out in input order.
    let printing: Promise<void> = Promise.resolve()

    const showProgress = (): void =>
      progress.update(`${countOf(storedCount, 'job')} stored, ${countOf(badLineCount, 'bad line')}`)

    const fail = (error: unknown): void => {
      if (failed) return
      failed = true
      input.pause()
      progress.clear()
      reject(error)
    }

    const finishIfDone = (): void => {
      if (!ended || failed || batchesInFlight > 0) return
      progress.finish(`${countOf(storedCount, 'job')} stored, ${countOf(badLineCount, 'bad line')}`)
      resolve({ storedCount, badLineCount })
    }

    const reportBadLine = (lineNumber: number, message: string): void => {
      badLineCount++
      progress.clear()
      process.stderr.write(`${paintStderr(`line ${lineNumber}:`, 'red')} ${message}\n`)
    }

    const takeLine = (lineNumber: number, line: string, byteLength: number): void => {
      if (failed || line.trim() === '') return
      let job: JobSpec
      try {
        job = jobFromLine(line)
      } catch (error) {
        // Any FerryError is about this line alone (validation, a bad duration): the others go on.
        if (!(error instanceof BadLineError || error instanceof FerryError)) throw error
        reportBadLine(lineNumber, error.message)
        return
      }
      if (batch.length > 0 && batchBytes + byteLength > BATCH_MAX_BYTES) submitBatch()
      batch.push(job)
      batchBytes += byteLength
      if (batch.length >= BATCH_MAX_LINES) submitBatch()
    }

    const lines = new LineSplitter({
      maxLineBytes: MAX_LINE_BYTES,
      onLine: takeLine,
      onTooLong: (lineNumber) => {
        if (failed) return
        reportBadLine(
          lineNumber,
          `longer than ${MAX_LINE_BYTES} bytes, more than any job can be (a payload may be at most ` +
            `${DEFAULT_MAX_PAYLOAD_BYTES} bytes of JSON); the rest of the line is skipped`,
        )
      },
    })

    const submitBatch = (): void => {
      if (batch.length === 0 || failed) return
      const specs = batch
      batch = []
      batchBytes = 0
      batchesInFlight++
      if (batchesInFlight >= MAX_BATCHES_IN_FLIGHT) input.pause()
      // Settled at once into a value, so a failure is never an unhandled rejection while it waits its turn.
      const committed: Promise<EnqueueResult[] | { error: unknown }> = client
        .enqueueMany(specs)
        .catch((error: unknown) => ({ error }))
      printing = printing
        .then(async () => {
          const outcome = await committed
          if (failed) return
          if (!Array.isArray(outcome)) return fail(outcome.error)
          if (process.stdout.isTTY) progress.clear()
          process.stdout.write(`${outcome.map((result) => result.id).join('\n')}\n`)
          storedCount += outcome.length
          batchesInFlight--
          showProgress()
          if (batchesInFlight < MAX_BATCHES_IN_FLIGHT && !ended) input.resume()
          finishIfDone()
        })
        .catch(fail)
    }

    const takeChunk = (chunk: Buffer): void => {
      if (failed) return
      lines.push(chunk)
      if (!flushScheduled) {
        flushScheduled = true
        setImmediate(() => {
          flushScheduled = false
          submitBatch()
        })
      }
    }

    // Bytes, not text: the splitter finds the newlines and decodes each line whole.
    input.on('data', (chunk: Buffer) => {
      try {
        takeChunk(chunk)
      } catch (error) {
        fail(error)
      }
    })
    input.on('end', () => {
      try {
        lines.end()
        submitBatch()
      } catch (error) {
        fail(error)
      }
      ended = true
      finishIfDone()
    })
    input.on('error', fail)
  })
}

/** One JSON line as a job for enqueueMany, checked here so a bad line fails alone, not its batch. */
function jobFromLine(line: string): JobSpec {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch (error) {
    throw new BadLineError(`is not valid JSON: ${(error as Error).message}`)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new BadLineError(
      `must be a JSON object such as {"name": "send-email", "payload": {...}} (got ${
        Array.isArray(value) ? 'an array' : truncate(JSON.stringify(value), 40)
      })`,
    )
  }
  const fields = value as Partial<Record<LineKey, unknown>>
  assertKnownKeys(fields, LINE_KEYS, '')
  const options: Record<string, unknown> = {}
  for (const key of PLAIN_OPTION_KEYS) if (fields[key] !== undefined) options[key] = fields[key]
  if (fields.delay != null) {
    if (fields.delayMs != null) {
      throw new ValidationError('invalid_option', 'delay', 'give delay or delayMs, not both')
    }
    if (typeof fields.delay !== 'string') {
      throw new ValidationError(
        'invalid_delay',
        'delay',
        'must be a duration such as "5s" or "10m" (delayMs takes a number)',
      )
    }
    options.delayMs = parseDuration(fields.delay, 'delay')
  }
  if (fields.runAt != null) options.runAt = toRunAt(fields.runAt, 'runAt')
  if (fields.expiresAt != null) options.expiresAt = toRunAt(fields.expiresAt, 'expiresAt')
  const name = fields.name
  const payload = fields.payload === undefined ? null : fields.payload
  normalizeJob(name, payload, options)
  // normalizeJob has checked every value: they are what EnqueueOptions says.
  return { name: name as string, payload, options: options as EnqueueOptions }
}

/** ISO 8601 text or epoch milliseconds; anything else is left for validation to refuse by name. */
/** A --run-at flag: digits alone are epoch milliseconds, as a number is in a --stdin line. */
export function parseRunAtFlag(text: string, field: string): number {
  return (/^\d+$/.test(text) ? Number(text) : toRunAt(text, field)) as number
}

function toRunAt(value: unknown, field: string): unknown {
  if (typeof value !== 'string') return value
  const ms = Date.parse(value)
  if (Number.isNaN(ms)) {
    throw new ValidationError(
      'invalid_run_at',
      field,
      `${JSON.stringify(value)} is not an ISO 8601 date (e.g. 2030-01-31T09:00:00Z) or epoch milliseconds`,
    )
  }
  return ms
}

interface ProgressLine {
  update(text: string): void
  clear(): void
  /** Draws `text` one last time and ends its line. */
  finish(text: string): void
}

/** A count redrawn in place on stderr, at most every PROGRESS_INTERVAL_MS; nothing when stderr is not a terminal. */
function progressLine(stream: NodeJS.WriteStream): ProgressLine {
  if (stream.isTTY !== true) return { update() {}, clear() {}, finish() {} }
  let shown = false
  let drawnAt = 0
  return {
    update(text) {
      const now = Date.now()
      if (now - drawnAt < PROGRESS_INTERVAL_MS) return
      drawnAt = now
      stream.write(`\r\x1b[K${text}`)
      shown = true
    },
    clear() {
      if (shown) stream.write('\r\x1b[K')
      shown = false
      drawnAt = 0
    },
    finish(text) {
      stream.write(`\r\x1b[K${text}\n`)
      shown = false
    },
  }
}
