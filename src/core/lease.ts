import { randomBytes } from 'node:crypto'

/**
 * A lease token proves which claim a worker holds. Every claim of a job draws a new one, and every
 * write about an active job must present it, so a worker that lost its lease (it froze, or its
 * lease expired and another worker claimed the job) can never overwrite the current owner's work.
 */
export type LeaseToken = string

const POOL_BYTES = 4096
const TOKEN_BYTES = 12
let pool = Buffer.alloc(0)
let offset = 0

/** 96 random bits as 24 hex characters. Draws from a pooled buffer: claims mint many at once. */
export function newLeaseToken(): LeaseToken {
  if (offset + TOKEN_BYTES > pool.length) {
    pool = randomBytes(POOL_BYTES)
    offset = 0
  }
  const token = pool.toString('hex', offset, offset + TOKEN_BYTES)
  offset += TOKEN_BYTES
  return token
}
