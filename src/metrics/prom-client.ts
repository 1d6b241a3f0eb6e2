/**
 * prom-client, an optional peer: loaded only when metrics are asked for, so users who want none
 * need not install it. It is a CommonJS package, so require() loads it synchronously and
 * registerFerryMetrics can stay synchronous, as prom-client's own calls are.
 */
import { createRequire } from 'node:module'

import type * as PromClientModule from 'prom-client'

import { MissingPeerDependencyError } from '../core/errors.js'

// Types only, for Ferry's own code: the public types never name the optional package.
export type PromClient = typeof PromClientModule

let loaded: PromClient | undefined

export function loadPromClient(): PromClient {
  if (loaded !== undefined) return loaded
  try {
    loaded = createRequire(import.meta.url)('prom-client') as PromClient
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND')
      throw new MissingPeerDependencyError('prom-client', "Ferry's Prometheus metrics", { cause: error })
    throw error
  }
  return loaded
}
