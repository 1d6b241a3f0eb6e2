/**
 * A pg connection of the benchmark's own that counts the jobs a PostgreSQL peer holds completed,
 * for the peers that settle in the background (their events come before the commit).
 */
import pg from 'pg'
import type { CompletedCounter, Target } from '../lib/types.js'
import { storeUrl } from './shared.js'

/** `query` returns one row with a column n: how many of the `enqueued` jobs are completed. */
export async function postgresCounter(
  target: Target,
  query: (enqueued: number) => { text: string; values: unknown[] },
): Promise<CompletedCounter> {
  const client = new pg.Client({ connectionString: storeUrl(target, 'postgres') })
  await client.connect()
  return {
    async count(enqueued) {
      const { text, values } = query(enqueued)
      const { rows } = await client.query<{ n: string }>(text, values)
      return Number(rows[0]!.n)
    },
    close: () => client.end(),
  }
}
