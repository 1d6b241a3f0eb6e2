/**
 * A claim's reads of a queue's ready jobs without a group (ferry_jobs_ready_by_name), name by name:
 * what a claim takes from a queue without grouped jobs, and the turns of the jobs without a group
 * when it goes round the groups (claim-groups.ts).
 */
import type { SqliteConnection } from './sqlite-connection.js'

/** The names that have ready jobs without a group in a queue: one index seek each (a skip scan). */
export function readyNames(connection: SqliteConnection, queue: string): string[] {
  const nextName = connection.statement('claim-ready-names').pluck()
  const names: string[] = []
  for (let after = ''; ;) {
    const name = nextName.get({ queue, after }) as string | undefined
    if (name === undefined) return names
    names.push(name)
    after = name
  }
}

/**
 * The ids of the next `limit` ready jobs without a group of one queue among these names, in claim
 * order: the first `limit` of each name (one index range each, ferry_jobs_ready_by_name), merged.
 * Jobs of other names cost nothing, however many stand ahead.
 */
export function nextIdsNamed(
  connection: SqliteConnection,
  queue: string,
  names: readonly string[],
  limit: number,
): number[] {
  const nextOfName = connection.statement('claim-next-named')
  type Candidate = { id: number; priority: number; run_at: number }
  const candidates: Candidate[] = []
  for (const name of names) {
    for (const row of nextOfName.all({ queue, name, limit }) as Candidate[]) candidates.push(row)
  }
  if (names.length > 1) {
    candidates.sort((a, b) => b.priority - a.priority || a.run_at - b.run_at || a.id - b.id)
  }
  return candidates.slice(0, limit).map((row) => row.id)
}
