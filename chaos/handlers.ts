/**
 * The chaos handler module, loaded by each worker from its own configuration. The job sleeps as
 * its payload says, and stops early when its attempt is aborted (its lease was lost).
 */
import { defineJobs } from '../src/index.js'
import type { ChaosPayload } from './config.js'

export default defineJobs({
  'chaos-sleep': (payload: ChaosPayload, { signal }) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, payload.sleepMs)
      signal.addEventListener('abort', () => {
        clearTimeout(timer)
        resolve()
      })
    }),
})
