/**
 * The scripts form every key name from the namespace's root themselves (lua/lib/prelude.lua), and
 * keys.ts names the same keys for the store's own commands and the tests: both lists must agree.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'

import { keyNames } from '../../src/store/redis/generated/assets.js'
import { redisKeys } from '../../src/store/redis/keys.js'

describe('Redis key names', () => {
  it("are the prelude's names after the root, in the prelude's order, for every namespace", () => {
    for (const namespace of ['default', 'a.b-c_9', 'x'.repeat(64)]) {
      const keys = redisKeys(namespace)
      assert.deepEqual(
        keyNames.map((name) => keys.root + name),
        [...keys.scriptKeys, ...keys.scriptPrefixes],
      )
    }
  })

  it('share the hash tag of the namespace, so every key a script forms is in the slot of KEYS 1', () => {
    const keys = redisKeys('tagged')
    assert.equal(keys.root, 'ferry:{tagged}:')
    for (const key of [
      ...keys.scriptKeys,
      ...keys.scriptPrefixes,
      keys.job('1'),
      keys.schedule('nightly'),
      keys.deliveryChannel('d'),
    ]) {
      assert.ok(key.startsWith(keys.root), key)
    }
  })
})
