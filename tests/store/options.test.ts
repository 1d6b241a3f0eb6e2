/**
 * A misspelt store option or URL parameter is refused before the store touches anything: no SQLite
 * file is created, no PostgreSQL schema migrated, no Redis key written. A typo of the isolation
 * setting (`shema`, `namspace`) must never fall back to the default schema or namespace, which
 * another application may be using. The parameters the drivers act on still pass through.
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { describe, test } from 'node:test'
import { Redis } from 'ioredis'

import { openStore, ValidationError } from '../../src/index.js'
import { PostgresStore } from '../../src/postgres.js'
import { parseRedisUrl, RedisStore } from '../../src/redis.js'
import { SqliteStore, type SqliteStoreOptions } from '../../src/sqlite.js'
import {
  adminQuery,
  POSTGRES_URL,
  postgresUnreachableReason,
  storeUrl,
  testSchemaName,
} from '../support/postgres-harness.js'
import {
  dropNamespace,
  redisUnreachableReason,
  TEST_REDIS_URL,
  uniqueNamespace,
} from '../support/redis-harness.js'
import { whenAvailable } from '../support/services.js'
import { tempDatabase } from '../support/sqlite-harness.js'
import { unknownOption } from '../support/unknown-option.js'
import { defer } from '../support/cleanup.js'

/** Asserts that opening rejects with the ValidationError of an unknown option (unknownOption). */
function rejectsUnknown(
  opening: Promise<unknown>,
  field: string,
  suggestion: string | null,
  known: readonly string[],
): Promise<void> {
  return assert.rejects(opening, unknownOption(field, suggestion, known))
}

/** A URL of the same server on a port where nothing listens: a store that tried to connect would fail otherwise. */
function unreachable(url: string): URL {
  const moved = new URL(url)
  moved.port = '1'
  return moved
}

describe('SQLite', () => {
  test('SqliteStore.open refuses a misspelt option and creates no file', async (t) => {
    const { path } = tempDatabase(t)
    await rejectsUnknown(
      SqliteStore.open({ path, durabilty: 'normal' } as SqliteStoreOptions),
      'durabilty',
      'durability',
      ['path', 'durability', 'busyTimeoutMs', 'fileMode'],
    )
    assert.equal(existsSync(path), false)
  })

  test('a sqlite: URL with a misspelt parameter is refused and creates no file', async (t) => {
    const { path, url } = tempDatabase(t)
    await rejectsUnknown(openStore(`${url}?durabilty=normal`), 'store.durabilty', 'durability', [
      'durability',
      'fileMode',
    ])
    await rejectsUnknown(openStore(`${url}?durability=normal&mode=0640`), 'store.mode', null, ['fileMode'])
    assert.equal(existsSync(path), false)
  })

  test('openStore refuses a misspelt option of its own and creates no file', async (t) => {
    const { path, url } = tempDatabase(t)
    await rejectsUnknown(openStore(url, { migrat: false } as never), 'migrat', 'migrate', [
      'migrate',
      'create',
      'onWarning',
    ])
    assert.equal(existsSync(path), false)
  })
})

await whenAvailable(postgresUnreachableReason(), () => {
  describe('PostgreSQL', () => {
    const schemaExists = async (schema: string): Promise<boolean> =>
      (await adminQuery('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])).length > 0

    test('a postgres:// URL with a misspelt parameter is refused before connecting, and no schema is made', async () => {
      const schema = testSchemaName()
      const url = new URL(storeUrl(schema))
      url.searchParams.set('poolSze', '3')
      await rejectsUnknown(openStore(url.toString()), 'store.poolSze', 'poolSize', [
        'schema',
        'poolSize',
        'sslmode',
        'application_name',
      ])
      assert.equal(await schemaExists(schema), false)
      // `shema` would have migrated the default schema `ferry` of whatever server the URL names:
      // refused before any connection, so even a server that is not there is not tried.
      const typo = unreachable(POSTGRES_URL)
      typo.searchParams.set('shema', schema)
      await rejectsUnknown(openStore(typo.toString()), 'store.shema', 'schema', ['schema'])
    })

    test('PostgresStore.open refuses a misspelt option, and a Ferry parameter inside connectionString', async () => {
      const schema = testSchemaName()
      await rejectsUnknown(
        PostgresStore.open({ connectionString: POSTGRES_URL, schema, poolsize: 3 } as never),
        'poolsize',
        'poolSize',
        ['connectionString', 'schema', 'migrate', 'poolSize'],
      )
      // connectionString goes to the driver, which would drop `schema` without a word.
      const inside = new URL(POSTGRES_URL)
      inside.searchParams.set('schema', schema)
      await rejectsUnknown(
        PostgresStore.open({ connectionString: inside.toString() }),
        'connectionString.schema',
        null,
        ['sslmode', 'application_name'],
      )
      assert.equal(await schemaExists(schema), false)
    })

    test('parameters the driver acts on still reach it', async (t) => {
      const schema = testSchemaName()
      defer(t, () => adminQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`))
      const url = new URL(storeUrl(schema))
      url.searchParams.set('application_name', schema)
      url.searchParams.set('sslmode', 'disable')
      const store = await openStore(url.toString())
      defer(t, () => store.close())
      const connections = await adminQuery('SELECT 1 FROM pg_stat_activity WHERE application_name = $1', [
        schema,
      ])
      assert.ok(connections.length > 0, 'no connection of the store carries its application_name')
    })
  })
})

await whenAvailable(redisUnreachableReason(), () => {
  describe('Redis', () => {
    const keysOf = async (namespace: string): Promise<string[]> => {
      const redis = new Redis(TEST_REDIS_URL)
      try {
        const keys: string[] = []
        let cursor = '0'
        do {
          const [next, found] = await redis.scan(cursor, 'MATCH', `ferry:{${namespace}}:*`, 'COUNT', 1000)
          cursor = next
          keys.push(...found)
        } while (cursor !== '0')
        return keys
      } finally {
        redis.disconnect()
      }
    }

    test('a redis:// URL with a misspelt parameter is refused before connecting, and writes no key', async () => {
      const namespace = uniqueNamespace('options')
      const url = new URL(TEST_REDIS_URL)
      url.searchParams.set('namespace', namespace)
      url.searchParams.set('allowEvction', 'true')
      await rejectsUnknown(openStore(url.toString()), 'store.allowEvction', 'allowEviction', [
        'namespace',
        'cluster',
        'allowEviction',
        'db',
      ])
      assert.deepEqual(await keysOf(namespace), [])
      // `namspace` would have used the namespace `default`, perhaps another application's.
      const typo = unreachable(TEST_REDIS_URL)
      typo.searchParams.set('namspace', namespace)
      await rejectsUnknown(openStore(typo.toString()), 'store.namspace', 'namespace', ['namespace'])
    })

    test('RedisStore.open refuses a misspelt option, and a Ferry parameter inside url', async () => {
      const namespace = uniqueNamespace('options')
      await rejectsUnknown(
        RedisStore.open({ url: TEST_REDIS_URL, namespace, onWarnig: () => {} } as never),
        'onWarnig',
        'onWarning',
        ['url', 'connection', 'cluster', 'namespace', 'migrate', 'allowEviction', 'onWarning'],
      )
      const inside = new URL(TEST_REDIS_URL)
      inside.searchParams.set('namespace', namespace)
      await rejectsUnknown(RedisStore.open({ url: inside.toString() }), 'url.namespace', null, [
        'db',
        'family',
      ])
      assert.deepEqual(await keysOf(namespace), [])
    })

    test('a Redis Cluster URL takes none of the driver parameters, which a cluster client would ignore', async () => {
      const seed = unreachable(TEST_REDIS_URL)
      seed.searchParams.set('cluster', 'true')
      seed.searchParams.set('family', '4')
      await rejectsUnknown(openStore(seed.toString()), 'store.family', null, ['namespace', 'cluster'])
      const url = unreachable(TEST_REDIS_URL)
      url.searchParams.set('family', '4')
      await assert.rejects(
        RedisStore.open({ url: url.toString(), cluster: true }),
        (error: unknown) =>
          error instanceof ValidationError &&
          error.message === 'url.family: unknown option (none are known here)',
      )
    })

    test('parameters the driver acts on still reach it', async (t) => {
      const namespace = uniqueNamespace('options')
      defer(t, () => dropNamespace(namespace))
      const url = new URL(TEST_REDIS_URL)
      url.searchParams.set('namespace', namespace)
      url.searchParams.set('connectionName', namespace)
      // What openStore opens, without the warning about the test server's persistence.
      const store = await RedisStore.open({ ...parseRedisUrl(url.toString()), onWarning: () => {} })
      defer(t, () => store.close())
      const redis = new Redis(TEST_REDIS_URL)
      defer(t, () => redis.disconnect())
      const clients = (await redis.call('CLIENT', 'LIST')) as string
      assert.match(clients, new RegExp(`\\bname=${namespace}\\b`))
    })
  })
})
