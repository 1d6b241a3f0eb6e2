import type { JobError } from './job.js'

const STACK_LIMIT = 8 * 1024
const MESSAGE_LIMIT = 2 * 1024

/**
 * What a handler threw, as data to store on the job. A thrown non-Error (a string, an object)
 * is kept as text with kind 'non_error', so its cause is not lost to "[object Object]".
 */
export function toJobError(thrown: unknown): JobError {
  if (thrown instanceof Error) {
    const error: JobError = { kind: 'error', name: thrown.name, message: clip(thrown.message, MESSAGE_LIMIT) }
    if (typeof thrown.stack === 'string') error.stack = clip(thrown.stack, STACK_LIMIT)
    return error
  }
  return {
    kind: 'non_error',
    message: clip(`a non-Error was thrown: ${describeValue(thrown)}`, MESSAGE_LIMIT),
  }
}

function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return String(value)
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

function clip(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}… (${text.length - limit} more characters)`
}
