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
    // prom-client itself missing, not a module it needs (that error is left as it is).
    const { code, message } = error as NodeJS.ErrnoException
    if (code === 'MODULE_NOT_FOUND' && message.includes(`'prom-client'`))
      throw new MissingPeerDependencyError('prom-client', 'Exporting Prometheus metrics', { cause: error })
    throw error
  }
  return loaded
}
