/** How much of a child's stderr a job's failure keeps: the last lines, within a byte budget. */
export const STDERR_TAIL_LINES = 20
export const STDERR_TAIL_BYTES = 4096

/** Appends text (one or more lines) to a tail, dropping the oldest lines past the limits. */
export function appendToTail(tail: string[], text: string): void {
  tail.push(...text.split('\n'))
  if (tail.length > STDERR_TAIL_LINES) tail.splice(0, tail.length - STDERR_TAIL_LINES)
  let bytes = tail.reduce((sum, line) => sum + line.length + 1, 0)
  while (bytes > STDERR_TAIL_BYTES && tail.length > 1) bytes -= tail.shift()!.length + 1
  if (bytes > STDERR_TAIL_BYTES) tail[0] = tail[0]!.slice(-STDERR_TAIL_BYTES)
}

/**
 * Keeps the tail of what this child writes to stderr during an attempt, so a handler that wrote
 * and then threw has its lines on its failure. Kept in the child because stderr reaches the
 * parent on its own stream and may trail the outcome message.
 */
export function recordStderr(): { reset(): void; text(): string } {
  let tail: string[] = []
  let partial = ''
  const stderr = process.stderr
  const write = stderr.write.bind(stderr) as (...args: unknown[]) => boolean
  stderr.write = ((chunk: unknown, ...rest: unknown[]) => {
    const text =
      partial + (typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'))
    const newline = text.lastIndexOf('\n')
    if (newline === -1) partial = text
    else {
      appendToTail(tail, text.slice(0, newline))
      partial = text.slice(newline + 1)
    }
    return write(chunk, ...rest)
  }) as typeof stderr.write
  return {
    reset() {
      tail = []
      partial = ''
    },
    text() {
      return partial === '' ? tail.join('\n') : [...tail, partial].join('\n')
    },
  }
}
