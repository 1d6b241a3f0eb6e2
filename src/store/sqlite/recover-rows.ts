/**
 * The recovery's reads and transaction body: the leases that ran out, oldest first
 * (sql/find-expired-leases.sql), and their jobs put back in line or ended dead when their attempts
 * are spent (sql/recover-expired.sql), each only if its lease is still the one that was seen.
 */
import type { JobState } from '../../core/job.js'
import type { ExpiredLease } from '../store.js'
import type { SqliteConnection } from './sqlite-connection.js'

export function expiredLeases(connection: SqliteConnection, now: number, limit: number): ExpiredLease[] {
  const rows = connection.statement('find-expired-leases').all({ now, limit }) as {
    id: number
    lease_token: string
    lease_expires_at: number
    lease_ms: number
  }[]
  return rows.map((row) => ({
    id: String(row.id),
    leaseToken: row.lease_token,
    leaseExpiresAt: row.lease_expires_at,
    leaseMs: row.lease_ms,
  }))
}

/** Inside a write transaction: the jobs of these leases back in line, or dead; ids in order. */
export function recoverLeases(
  connection: SqliteConnection,
  leases: readonly Pick<ExpiredLease, 'id' | 'leaseToken' | 'leaseExpiresAt'>[],
  now: number,
): { retried: string[]; dead: string[] } {
  const rows = connection.statement('recover-expired').all({
    leases: JSON.stringify(
      leases.map(({ id, leaseToken, leaseExpiresAt }) => ({
        id: Number(id),
        token: leaseToken,
        expiresAt: leaseExpiresAt,
      })),
    ),
    now,
  }) as { id: number; state: JobState }[]
  const recovered = { retried: [] as string[], dead: [] as string[] }
  for (const row of rows.sort((a, b) => a.id - b.id)) {
    ;(row.state === 'dead' ? recovered.dead : recovered.retried).push(String(row.id))
  }
  return recovered
}
