/**
 * The stores the bad-input suite runs against: one line each. A store's harness lives in
 * tests/helpers/<store>-harness.ts and exports a CreateHarness (with `url` set, so the tests that
 * run `ferry` in another process can reach the same data).
 */
import type { TestContext } from 'node:test'

import { createSqliteHarness } from '../helpers/sqlite-harness.js'
import type { CreateHarness, StoreHarness } from '../helpers/store-harness.js'

export interface StoreUnderTest {
  name: string
  createHarness: CreateHarness
}

export const STORES: readonly StoreUnderTest[] = [{ name: 'sqlite', createHarness: createSqliteHarness }]

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
