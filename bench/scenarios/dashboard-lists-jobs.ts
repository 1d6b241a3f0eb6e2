import type { NewJob } from '../../src/core/job.js'
import { normalizeJob } from '../../src/core/validate.js'

/** The dashboard-lists scenario's job number `i`: a small payload, one in 1,000 with a unique key. */
export function newJobOf(i: number, queue: string, name: string): NewJob {
  const uniqueKey = i % 1000 === 7 ? `key-${i}` : undefined
  return normalizeJob(
    name,
    { i, user: { id: i % 977 } },
    { queue, ...(uniqueKey === undefined ? {} : { uniqueKey }) },
  )
}
