/**
 * The executors refuse a misspelt pool option at construction, before any child starts: a typo
 * of a recycling or memory limit must not run the pool without it.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import {
  createExecutor,
  ForkExecutor,
  ProcessesExecutor,
  ThreadsExecutor,
  type ForkExecutorOptions,
  type PoolExecutorOptions,
} from '../../src/index.js'
import { unknownOption } from '../support/unknown-option.js'
import { throwsValidation } from '../support/validation.js'
import { POOL_HANDLERS } from './pool-helpers.js'

const POOL_KEYS = ['size', 'maxJobsPerChild', 'maxRssBytes', 'maxHeapMb', 'killGraceMs', 'startTimeoutMs']

test('the processes and threads executors refuse a misspelt pool option', () => {
  assert.throws(
    () => new ProcessesExecutor(POOL_HANDLERS, { size: 1, maxJobPerChild: 3 } as PoolExecutorOptions),
    unknownOption('maxJobPerChild', 'maxJobsPerChild', POOL_KEYS),
  )
  assert.throws(
    () => new ThreadsExecutor(POOL_HANDLERS, { maxHeapMB: 32 } as PoolExecutorOptions),
    unknownOption('maxHeapMB', 'maxHeapMb', POOL_KEYS),
  )
})

test('the fork executor refuses the recycling options, which cannot apply to a child per job', () => {
  assert.throws(
    () => new ForkExecutor(POOL_HANDLERS, { maxJobsPerChild: 5 } as ForkExecutorOptions),
    (error: unknown) => {
      unknownOption('maxJobsPerChild', null, ['size', 'maxHeapMb', 'killGraceMs'])(error)
      assert.doesNotMatch((error as Error).message, /known options: .*maxJobsPerChild/)
      return true
    },
  )
})

test('createExecutor refuses a misspelt pool option whatever the strategy, inline included', () => {
  for (const strategy of ['inline', 'threads', 'processes', 'fork'] as const) {
    assert.throws(
      () => createExecutor(strategy, POOL_HANDLERS, { sise: 2 } as PoolExecutorOptions),
      unknownOption('sise', 'size', POOL_KEYS),
      strategy,
    )
  }
})

test('every pool strategy refuses a heap limit that is not a whole number of MB, naming maxHeapMb', () => {
  for (const maxHeapMb of [0, -64, 1.5, '64'] as unknown as number[]) {
    for (const make of [
      () => new ProcessesExecutor(POOL_HANDLERS, { maxHeapMb }),
      () => new ThreadsExecutor(POOL_HANDLERS, { maxHeapMb }),
      () => new ForkExecutor(POOL_HANDLERS, { maxHeapMb }),
    ]) {
      throwsValidation(make, 'invalid_option', 'maxHeapMb')
    }
  }
})
