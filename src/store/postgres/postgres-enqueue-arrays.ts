/**
 * PostgreSQL's parameters of an enqueue: each column of a batch as one array (one element per job,
 * in PostgreSQL's binary format where pg would spend more turning it into text), so a whole batch
 * is one statement; one job's plain values for sql/enqueue-one.sql; and the ids the statement
 * returns, as each job's result.
 */
import type { NewJob } from '../../core/job.js'
import { hasMeta, metaOf } from '../kernel/job-meta.js'
import { uniqueUntilOf } from '../kernel/unique-keys.js'
import type { EnqueueResult } from '../store.js'

/** How enqueueArrays sends each array: in PostgreSQL's binary format, or as pg's plain arrays. */
export interface ArrayEncoding {
  text(items: (string | null)[]): unknown
  integer(items: (number | null)[]): unknown
  bigint(items: (number | null)[]): unknown
}

/**
 * Text in binary, integers as pg's plain arrays: what binaryEnqueueArrays sends when an integer is
 * none of its column's, so that the server refuses it exactly as a caller's `tx` would see.
 */
const binaryTextOnly: ArrayEncoding = {
  text: binaryTextArray,
  integer: (items) => items,
  bigint: (items) => items,
}

/** pg's own arrays, for a caller's `tx`: it may be a driver that sends a Buffer as bytea. */
export const plainArrays: ArrayEncoding = {
  text: (items) => items,
  integer: (items) => items,
  bigint: (items) => items,
}

/**
 * enqueue's array parameters, one element per job, in the order of sql/enqueue.sql. The groups,
 * the two arrays of the start deadline and the metas are null as a whole when no job of the batch
 * has one (the statement reads a NULL array as NULL for every job): a batch of ordinary jobs sends
 * nothing more than before they existed.
 */
export function enqueueArrays(jobs: readonly NewJob[], encoding: ArrayEncoding): unknown[] {
  const n = jobs.length
  const queue = new Array<string>(n)
  const name = new Array<string>(n)
  const payload = new Array<string>(n)
  const priority = new Array<number>(n)
  const runAt = new Array<number | null>(n)
  const delayMs = new Array<number>(n)
  const maxAttempts = new Array<number>(n)
  const timeoutMs = new Array<number | null>(n)
  const uniqueKey = new Array<string | null>(n)
  const group = new Array<string | null>(n)
  const expiresAt = new Array<number | null>(n)
  const expiresInMs = new Array<number | null>(n)
  let groups = false
  let deadlines = false
  let metas = false
  for (let i = 0; i < n; i++) {
    const job = jobs[i]!
    queue[i] = job.queue
    name[i] = job.name
    payload[i] = job.payload
    priority[i] = job.priority
    runAt[i] = job.runAt
    delayMs[i] = job.delayMs
    maxAttempts[i] = job.maxAttempts
    timeoutMs[i] = job.timeoutMs
    uniqueKey[i] = job.uniqueKey
    group[i] = job.group
    expiresAt[i] = job.expiresAt
    expiresInMs[i] = job.expiresInMs
    groups ||= job.group !== null
    deadlines ||= job.expiresAt !== null || job.expiresInMs !== null
    metas ||= hasMeta(job)
  }
  return [
    encoding.text(queue),
    encoding.text(name),
    encoding.text(payload),
    encoding.integer(priority),
    encoding.bigint(runAt),
    encoding.bigint(delayMs),
    encoding.integer(maxAttempts),
    encoding.integer(timeoutMs),
    encoding.text(uniqueKey),
    groups ? encoding.text(group) : null,
    deadlines ? encoding.bigint(expiresAt) : null,
    deadlines ? encoding.bigint(expiresInMs) : null,
    metas ? encoding.text(jobs.map(metaOf)) : null,
  ]
}

/**
 * enqueueArrays in binary for the store's own connections, in two passes over the
 * jobs instead of two per array, over one buffer: in a fresh process, the benchmark's or a
 * short-lived producer's, each loop is first interpreted, and the nine arrays' eighteen loops
 * took 45-69 ms for 10,000 jobs where the same work took 20 ms warm. A queue or name the same as
 * the job before's is measured once. Integers out of their column's range (or not integers) send
 * the integer arrays as plain arrays, so that the server refuses them as before.
 */
export function binaryEnqueueArrays(jobs: readonly NewJob[]): unknown[] {
  const n = jobs.length
  const queueLengths = new Int32Array(n)
  const nameLengths = new Int32Array(n)
  const payloadLengths = new Int32Array(n)
  const keyLengths = new Int32Array(n)
  let queueBytes = 0
  let nameBytes = 0
  let payloadBytes = 0
  let keyBytes = 0
  let keyNull = 0
  let runAtNulls = 0
  let timeoutNulls = 0
  let integers = true
  let lastQueue: string | null = null
  let lastQueueBytes = 0
  let lastName: string | null = null
  let lastNameBytes = 0
  let groups = false
  let deadlines = false
  let metas = false
  for (let i = 0; i < n; i++) {
    const job = jobs[i]!
    if (job.queue !== lastQueue) {
      lastQueue = job.queue
      lastQueueBytes = Buffer.byteLength(lastQueue)
    }
    if (job.name !== lastName) {
      lastName = job.name
      lastNameBytes = Buffer.byteLength(lastName)
    }
    queueLengths[i] = lastQueueBytes
    nameLengths[i] = lastNameBytes
    payloadLengths[i] = Buffer.byteLength(job.payload)
    queueBytes += lastQueueBytes
    nameBytes += lastNameBytes
    payloadBytes += payloadLengths[i]!
    if (job.uniqueKey === null) {
      keyLengths[i] = -1
      keyNull = 1
    } else {
      keyLengths[i] = Buffer.byteLength(job.uniqueKey)
      keyBytes += keyLengths[i]!
    }
    if (job.runAt === null) runAtNulls++
    else integers &&= isInt8(job.runAt)
    if (job.timeoutMs === null) timeoutNulls++
    else integers &&= isInt4(job.timeoutMs)
    integers &&= isInt4(job.priority) && isInt8(job.delayMs) && isInt4(job.maxAttempts)
    if (job.group !== null) groups = true
    if (hasMeta(job)) metas = true
    if (job.expiresAt !== null || job.expiresInMs !== null) {
      deadlines = true
      integers &&=
        (job.expiresAt === null || isInt8(job.expiresAt)) &&
        (job.expiresInMs === null || isInt8(job.expiresInMs))
    }
  }
  if (!integers) return enqueueArrays(jobs, binaryTextOnly)
  // Each array: its header, then per element a length (4 bytes) and its bytes (none for NULL),
  // in the order of functions/enqueue.sql. No array destructuring, map or for…of here: each is an
  // iteration whose map check deoptimised this function on every call (--trace-deopt, "wrong
  // map" at the loop over the sizes), so its loops over the jobs ran unoptimised: 75-83 ms for
  // 10,000 jobs on the second call in a fresh process, load 7.
  const sizes = [
    4 * n + queueBytes,
    4 * n + nameBytes,
    4 * n + payloadBytes,
    8 * n, // priority
    12 * n - 8 * runAtNulls,
    12 * n, // delay_ms
    8 * n, // max_attempts
    8 * n - 4 * timeoutNulls,
    4 * n + keyBytes,
  ]
  let total = 0
  for (let c = 0; c < sizes.length; c++) total += sizes[c]! + ARRAY_HEADER_BYTES
  const all = Buffer.allocUnsafe(total)
  const view = viewOf(all)
  const arrays: (Buffer | null)[] = []
  const oids = [TEXT_OID, TEXT_OID, TEXT_OID, INT4_OID, INT8_OID, INT8_OID, INT4_OID, INT4_OID, TEXT_OID]
  const hasNull = [0, 0, 0, 0, runAtNulls > 0 ? 1 : 0, 0, 0, timeoutNulls > 0 ? 1 : 0, keyNull]
  // Where each array's next element goes.
  const at: number[] = []
  let start = 0
  for (let c = 0; c < sizes.length; c++) {
    const size = sizes[c]! + ARRAY_HEADER_BYTES
    writeArrayHeader(view, start, hasNull[c]!, oids[c]!, n)
    arrays.push(all.subarray(start, start + size))
    at.push(start + ARRAY_HEADER_BYTES)
    start += size
  }
  let queueAt = at[0]!
  let nameAt = at[1]!
  let payloadAt = at[2]!
  let priorityAt = at[3]!
  let runAtAt = at[4]!
  let delayAt = at[5]!
  let attemptsAt = at[6]!
  let timeoutAt = at[7]!
  let keyAt = at[8]!
  for (let i = 0; i < n; i++) {
    const job = jobs[i]!
    view.setInt32(queueAt, queueLengths[i]!)
    queueAt += 4 + all.write(job.queue, queueAt + 4, 'utf8')
    view.setInt32(nameAt, nameLengths[i]!)
    nameAt += 4 + all.write(job.name, nameAt + 4, 'utf8')
    view.setInt32(payloadAt, payloadLengths[i]!)
    payloadAt += 4 + (payloadLengths[i]! > 0 ? all.write(job.payload, payloadAt + 4, 'utf8') : 0)
    view.setInt32(keyAt, keyLengths[i]!)
    keyAt += 4 + (keyLengths[i]! > 0 ? all.write(job.uniqueKey!, keyAt + 4, 'utf8') : 0)
    priorityAt = writeInt4(view, priorityAt, job.priority)
    runAtAt = writeInt8(view, runAtAt, job.runAt)
    delayAt = writeInt8(view, delayAt, job.delayMs)
    attemptsAt = writeInt4(view, attemptsAt, job.maxAttempts)
    timeoutAt = writeInt4(view, timeoutAt, job.timeoutMs)
  }
  // Groups, deadlines and metas in passes of their own, only for a batch that has any: the loops
  // above stay as they were for ordinary jobs.
  arrays.push(
    groups ? binaryTextArray(jobs.map((job) => job.group)) : null,
    deadlines ? binaryInt8Array(jobs.map((job) => job.expiresAt)) : null,
    deadlines ? binaryInt8Array(jobs.map((job) => job.expiresInMs)) : null,
    metas ? binaryTextArray(jobs.map(metaOf)) : null,
  )
  return arrays
}

/**
 * sql/enqueue.sql's last three arrays, after now and the token base: each job's unique key mode,
 * throttle window (kernel/unique-keys.ts) and debounce, each null as a whole when no job of the
 * batch has one, so that a batch of ordinary jobs sends nothing more. pg's plain arrays: only
 * keyed jobs have them.
 */
export function uniqueModeArrays(jobs: readonly NewJob[]): ((string | number | null)[] | null)[] {
  let modes = false
  let windows = false
  let debounces = false
  for (let i = 0; i < jobs.length; i++) {
    const job = jobs[i]!
    if (job.uniqueKey === null) continue
    modes ||= uniqueUntilOf(job) !== null
    windows ||= job.uniqueForMs != null
    debounces ||= job.debounceMs != null
  }
  return [
    modes ? jobs.map(uniqueUntilOf) : null,
    windows ? jobs.map((job) => job.uniqueForMs ?? null) : null,
    debounces ? jobs.map((job) => job.debounceMs ?? null) : null,
  ]
}

/** Between the texts of a column in sql/enqueue-joined.sql: no queue or job name, and no JSON text, holds it. */
const TEXT_SEPARATOR = '\x1e'
/**
 * Characters of payloads that one joined string may carry: V8 refuses a string past 2^29 - 24, and
 * an enqueueMany may carry 512 MiB. Beyond it, the batch goes as binary arrays.
 */
const MAX_JOINED_CHARS = 2 ** 28

/**
 * sql/enqueue-joined.sql's parameters of a batch of two jobs or more, before now and the token
 * base: each column as one string, joined by V8's own join rather than written element by element
 * (sql/enqueue-joined.sql says why). Null when the batch must go as arrays: a unique key (a key may
 * hold any character), a text holding the separator (a group may hold any character; a queue, a
 * name or a payload only from a caller of the store that did not go through the Client's checks),
 * or payloads past MAX_JOINED_CHARS. A meta is JSON.stringify's text, which escapes the separator.
 */
export function joinedEnqueueParams(jobs: readonly NewJob[]): unknown[] | null {
  let chars = 0
  let lastQueue: string | null = null
  let lastName: string | null = null
  for (let i = 0; i < jobs.length; i++) {
    const job = jobs[i]!
    if (job.uniqueKey !== null || job.payload.includes(TEXT_SEPARATOR)) return null
    if (job.group !== null && job.group.includes(TEXT_SEPARATOR)) return null
    if (job.queue !== lastQueue) {
      if (job.queue.includes(TEXT_SEPARATOR)) return null
      lastQueue = job.queue
    }
    if (job.name !== lastName) {
      if (job.name.includes(TEXT_SEPARATOR)) return null
      lastName = job.name
    }
    chars += job.payload.length
  }
  if (chars > MAX_JOINED_CHARS) return null
  // Without the unique keys' column: the statement passes NULL.
  const columns = enqueueArrays(jobs, joinedColumns)
  columns.splice(8, 1)
  return columns
}

/** Each column as one string; join writes null as the empty element, which the statement reads as NULL. */
const joinedColumns: ArrayEncoding = {
  text: (items) => items.join(TEXT_SEPARATOR),
  integer: (items) => items.join(','),
  bigint: (items) => items.join(','),
}

function isInt4(value: number): boolean {
  return Number.isInteger(value) && value >= -(2 ** 31) && value <= 2 ** 31 - 1
}

function isInt8(value: number): boolean {
  return Number.isSafeInteger(value)
}

/** One element of a binary integer[] at `offset` (NULL or 4 bytes); returns the next offset. */
function writeInt4(view: DataView, offset: number, value: number | null): number {
  if (value === null) {
    view.setInt32(offset, -1)
    return offset + 4
  }
  view.setInt32(offset, 4)
  view.setInt32(offset + 4, value)
  return offset + 8
}

/** One element of a binary bigint[] (NULL or 8 bytes: the high and low 32 bits, floor keeping
 * negatives exact, without a BigInt per element); returns the next offset. */
function writeInt8(view: DataView, offset: number, value: number | null): number {
  if (value === null) {
    view.setInt32(offset, -1)
    return offset + 4
  }
  const high = Math.floor(value / 2 ** 32)
  view.setInt32(offset, 8)
  view.setInt32(offset + 4, high)
  view.setUint32(offset + 8, value - high * 2 ** 32)
  return offset + 12
}

/**
 * The results of sql/enqueue.sql, which come as one row, ids joined by commas and one 't', 'f' or
 * 'd' (debounced) per job for created: 10,000 rows of two columns cost this process 11.9 ms to read, one such row
 * 5.5 ms (medians of 9).
 */
export function enqueueResults(row: { ids: string; created: string }): EnqueueResult[] {
  const ids = row.ids.split(',')
  const { created } = row
  const results = new Array<EnqueueResult>(ids.length)
  for (let i = 0; i < ids.length; i++) {
    const flag = created.charCodeAt(i)
    results[i] =
      flag === D ? { id: ids[i]!, created: false, debounced: true } : { id: ids[i]!, created: flag === T }
  }
  return results
}

const T = 't'.charCodeAt(0)
const D = 'd'.charCodeAt(0)

/**
 * Whether a batch is one job without a unique key, which sql/enqueue-one.sql enqueues as a plain
 * statement; any other batch goes through functions/enqueue-batch.sql.
 */
export function isPlainSingle(jobs: readonly NewJob[]): jobs is readonly [NewJob] {
  return jobs.length === 1 && jobs[0]!.uniqueKey === null
}

/** sql/enqueue-one.sql's parameters of the job, before now and the token base. */
export function enqueueOneValues(job: NewJob): unknown[] {
  return [
    job.queue,
    job.name,
    job.payload,
    job.priority,
    job.runAt,
    job.delayMs,
    job.maxAttempts,
    job.timeoutMs,
    job.group,
    job.expiresAt,
    job.expiresInMs,
    metaOf(job),
  ]
}

const ARRAY_HEADER_BYTES = 20

/**
 * A DataView over the buffer's bytes, for the lengths and integers: V8 builds its methods in,
 * where each of Buffer's writeInt32BE is a function of Node's that a fresh process (the
 * benchmark's, a short-lived producer's) first interprets: encoding an enqueue of 10,000 jobs
 * took 45-69 ms in a fresh process with Buffer's methods and 20 ms once warm.
 */
function viewOf(buffer: Buffer): DataView {
  return new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength)
}

/** The header of a one-dimensional binary array at `offset`. */
function writeArrayHeader(
  view: DataView,
  offset: number,
  hasNull: number,
  oid: number,
  length: number,
): void {
  view.setInt32(offset, 1)
  view.setInt32(offset + 4, hasNull)
  view.setInt32(offset + 8, oid)
  view.setInt32(offset + 12, length)
  view.setInt32(offset + 16, 1)
}

const TEXT_OID = 25
const INT4_OID = 23
const INT8_OID = 20

/**
 * A text[] parameter in PostgreSQL's binary array format (pg sends a Buffer as a binary
 * parameter). Each element is its UTF-8 bytes behind a length, so neither side escapes or scans
 * it: for 10,000 payloads of 520 B, pg's text array literal cost this process a median of 128 ms
 * of CPU time and the binary one 74 ms (5 runs of one batch each, load 8-9), and the server's
 * array_recv copies where array_in parses quotes and backslashes. Only the store's own
 * connections get it: a caller's `tx` may be a driver that sends a Buffer as bytea.
 */
export function binaryTextArray(items: readonly (string | null)[]): Buffer {
  const lengths = new Array<number>(items.length)
  let size = ARRAY_HEADER_BYTES
  let hasNull = 0
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!
    if (item === null) {
      lengths[i] = -1
      hasNull = 1
      size += 4
    } else {
      lengths[i] = Buffer.byteLength(item)
      size += 4 + lengths[i]!
    }
  }
  const buffer = Buffer.allocUnsafe(size)
  const view = viewOf(buffer)
  writeArrayHeader(view, 0, hasNull, TEXT_OID, items.length)
  let offset = ARRAY_HEADER_BYTES
  for (let i = 0; i < items.length; i++) {
    view.setInt32(offset, lengths[i]!)
    offset += 4
    if (lengths[i]! > 0) offset += buffer.write(items[i]!, offset, 'utf8')
  }
  return buffer
}

/** A bigint[] parameter in PostgreSQL's binary array format, as binaryEnqueueArrays writes its own. */
function binaryInt8Array(items: readonly (number | null)[]): Buffer {
  let nulls = 0
  for (let i = 0; i < items.length; i++) if (items[i] === null) nulls++
  const buffer = Buffer.allocUnsafe(ARRAY_HEADER_BYTES + 12 * items.length - 8 * nulls)
  const view = viewOf(buffer)
  writeArrayHeader(view, 0, nulls > 0 ? 1 : 0, INT8_OID, items.length)
  let offset = ARRAY_HEADER_BYTES
  for (let i = 0; i < items.length; i++) offset = writeInt8(view, offset, items[i] ?? null)
  return buffer
}

/** The queues whose jobs in this batch are ready at once (runAt in the past or no delay). */
export function readyQueuesOf(jobs: readonly NewJob[], now: number | undefined): Set<string> {
  const at = now ?? Date.now()
  const queues = new Set<string>()
  for (const job of jobs) if (job.runAt === null ? job.delayMs <= 0 : job.runAt <= at) queues.add(job.queue)
  return queues
}
