// Ferry's own output lines, written so that nothing a job handler does to the standard streams can
// crash the process. An inline handler runs in the worker's process and may end, destroy or close
// process.stderr or process.stdout; a worker writing its next log line through such a stream died
// of an unhandled 'error' event (a write after end, EPIPE from the shut pipe, EBADF). So Ferry
// writes its lines straight to the file descriptor, synchronously, and drops what cannot be written.

import { fstatSync, writeSync } from 'node:fs'
import { Writable } from 'node:stream'

/**
 * How long one write waits, in all, for a full non-blocking pipe before the rest is dropped. Once
 * a write gave up, later ones wait no more until one goes through: a reader that stopped reading
 * must not stall the event loop (and the lease renewals) for every line.
 */
const FULL_PIPE_WAIT_MS = 100
/** Errors after which the same write may succeed a moment later. */
const RETRYABLE = new Set(['EAGAIN', 'EWOULDBLOCK', 'EINTR'])
/** Atomics.wait on this is a synchronous sleep: the write must finish before the caller goes on. */
const sleeper = new Int32Array(new SharedArrayBuffer(4))

/**
 * What a descriptor refers to (device and inode), or null when it is not open. Once a handler has
 * closed fd 2, the next file the process opens (a database file) may get number 2: comparing
 * this before each write keeps log lines out of it.
 */
function identify(fd: number): string | null {
  try {
    const { dev, ino } = fstatSync(fd)
    return `${dev}:${ino}`
  } catch {
    return null
  }
}

/** Writes to one file descriptor; never throws, never emits an error. */
export class FdWriter {
  readonly fd: number
  /** What the descriptor referred to when Ferry started: writes go only there. */
  private readonly identity: string | null
  /** The last write gave up on a full pipe. */
  private stalled = false

  constructor(fd: number) {
    this.fd = fd
    this.identity = identify(fd)
  }

  /** Writes `data` before returning; whatever can no longer be written is dropped. */
  write(data: string | Uint8Array): void {
    if (this.identity === null || identify(this.fd) !== this.identity) return
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data
    let offset = 0
    let waitedMs = 0
    while (offset < bytes.length) {
      try {
        offset += writeSync(this.fd, bytes, offset)
      } catch (error) {
        // A pipe Node made non-blocking is full: give its reader a moment, not forever.
        const code = (error as NodeJS.ErrnoException).code ?? ''
        if (!RETRYABLE.has(code)) return
        if (this.stalled || waitedMs >= FULL_PIPE_WAIT_MS) {
          this.stalled = true
          return
        }
        Atomics.wait(sleeper, 0, 0, 1)
        waitedMs++
      }
    }
    this.stalled = false
  }

  /** Writes `text` and a newline. */
  line(text: string): void {
    this.write(`${text}\n`)
  }

  /** The same writer as a stream, for code that takes one (the pool forwarding its children's lines). */
  toStream(): Writable {
    return new Writable({
      decodeStrings: false,
      write: (chunk: string | Uint8Array, _encoding, done) => {
        this.write(chunk)
        done()
      },
    })
  }
}

/** Ferry's own stdout and stderr, pinned to what fds 1 and 2 were when the process started. */
export const ferryStdout = new FdWriter(1)
export const ferryStderr = new FdWriter(2)

let ignoringStreamErrors = false

const dropError = (): void => {}

/**
 * For a process that must outlive what its handlers do (`ferry work`): an 'error' on
 * process.stdout or process.stderr (a handler's console.log after it ended stdout, or a reader
 * that went away) is dropped instead of killing the process with its jobs half run. Ferry's own
 * lines do not go through those streams: they use ferryStdout and ferryStderr.
 */
export function ignoreStandardStreamErrors(): void {
  if (ignoringStreamErrors) return
  ignoringStreamErrors = true
  process.stdout.on('error', dropError)
  process.stderr.on('error', dropError)
}

/**
 * For the short commands: `ferry jobs --json | head -1` closes stdout's pipe early, which is no
 * error of ours, so EPIPE there ends the process with 0. Not once ignoreStandardStreamErrors() was
 * called: a worker must not exit because a handler's output has no reader any more.
 */
export function exitWhenStdoutReaderLeaves(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (ignoringStreamErrors) return
    if (error.code === 'EPIPE') process.exit(0)
    throw error
  })
}
