/**
 * Every store, for the suites that run the same tests on each (bad input, group commit, worker
 * SIGKILL): one line each. A store's harness lives in
 * tests/support/<store>-harness.ts and exports a CreateHarness (with `url` set, so the tests that
 * run `ferry` in another process can reach the same data).
 */
import { after, type TestContext } from 'node:test'

import { postgresHarnesses, postgresUnreachableReason } from './postgres-harness.js'
import { redisHarness, redisUnreachableReason } from './redis-harness.js'
import { skipUnlessAvailable } from './services.js'
import { createSqliteHarness } from './sqlite-harness.js'
import type { CreateHarness, StoreHarness } from './store-harness.js'

export interface StoreUnderTest {
  name: string
  createHarness: CreateHarness
  /** Why the store cannot be tested here (its server is unreachable outside CI); the suite shows it skipped. */
  skip?: string
}

const postgres = postgresHarnesses()
after(() => postgres.dropSchema())

export const STORES: readonly StoreUnderTest[] = [
  { name: 'sqlite', createHarness: createSqliteHarness },
  {
    name: 'postgres',
    createHarness: postgres.createHarness,
    skip: skipUnlessAvailable(await postgresUnreachableReason()).skip,
  },
  {
    name: 'redis',
    createHarness: redisHarness('bad-input'),
    skip: skipUnlessAvailable(await redisUnreachableReason()).skip,
  },
]

/** A fresh store for one test, closed and removed after it. */
export async function freshStore(t: TestContext, { createHarness }: StoreUnderTest): Promise<StoreHarness> {
  const harness = await createHarness()
  t.after(() => harness.close())
  return harness
}

/** The store's URL, for a test that runs `ferry` on it in another process. */
export function urlOf(harness: StoreHarness): string {
  if (harness.url === undefined) throw new Error('this store harness gives no url')
  return harness.url
}
