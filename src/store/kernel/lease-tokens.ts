/**
 * Lease tokens, as every backend mints them from here. A token proves which claim a worker holds:
 * every claim of a job draws a new one, and every write about an active job must present it, so
 * a worker that lost its lease (it froze, or its lease expired and another worker claimed the job)
 * can never overwrite the current owner's work. One claim call draws one random base, and each
 * job it leases gets the base with a suffix of its own (`base.n`), so a claim of a thousand jobs
 * draws randomness once.
 */
import { randomBytes } from 'node:crypto'

const POOL_BYTES = 4096
const BASE_BYTES = 12
let pool = Buffer.alloc(0)
let offset = 0

/**
 * 96 random bits (as many as any store drew for a token before) as 16 base64url characters, from
 * a pooled buffer: claims draw many.
 */
export function newLeaseTokenBase(): string {
  if (offset + BASE_BYTES > pool.length) {
    pool = randomBytes(POOL_BYTES)
    offset = 0
  }
  const base = pool.toString('base64url', offset, offset + BASE_BYTES)
  offset += BASE_BYTES
  return base
}
