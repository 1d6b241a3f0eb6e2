import type { JobError } from './job.js'

const STACK_LIMIT = 8 * 1024
const MESSAGE_LIMIT = 2 * 1024

/**
 * What a handler threw, as data to store on the job. A thrown non-Error (a string, an object)
 * is kept as text with kind 'non_error', so its cause is not lost to "[object Object]".
 *
 * Never throws: a thrown value is hostile input (a getter that throws, a Proxy, a null-prototype
 * object with a cycle), and describing it must not turn the handler's failure into a crash of
 * whatever runs the handler.
 */
export function toJobError(thrown: unknown): JobError {
  if (safely(() => thrown instanceof Error, false)) {
    const error = thrown as Error
    const name = safely(() => String(error.name), 'Error')
    const message = safely(() => String(error.message), '(the message could not be read)')
    const result: JobError = { kind: 'error', name, message: clip(message, MESSAGE_LIMIT) }
    const stack = safely(() => error.stack, undefined)
    if (typeof stack === 'string') result.stack = clip(stack, STACK_LIMIT)
    return result
  }
  return {
    kind: 'non_error',
    message: clip(`a non-Error was thrown: ${describeValue(thrown)}`, MESSAGE_LIMIT),
  }
}

function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') {
    return safely(() => String(value), typeof value)
  }
  return safely(
    () => JSON.stringify(value) ?? String(value),
    safely(() => String(value), `an unprintable ${typeof value}`),
  )
}

function safely<T>(read: () => T, fallback: T): T {
  try {
    return read()
  } catch {
    return fallback
  }
}

function clip(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}… (${text.length - limit} more characters)`
}
