// The handlers `ferry demo` runs: small sleeps standing in for real work, one job that fails once
// before it succeeds, and one that can never succeed.
import { defineJobs, permanentFailure } from '../core/handler.js'

export default defineJobs({
  'demo.charge-card': async ({ amountCents }: { amountCents: number }, { signal }) => {
    await work(2, 8, signal)
    return { charged: amountCents }
  },
  'demo.send-email': async ({ to }: { to: string }, { signal }) => {
    await work(1, 5, signal)
    return { sentTo: to }
  },
  'demo.call-webhook': async ({ url }: { url: string }, { attempt, signal }) => {
    await work(1, 3, signal)
    if (attempt === 1) throw new Error(`${url} answered 503 Service Unavailable`)
    return { delivered: true }
  },
  'demo.resize-image': async ({ width }: { width: number }, { signal }) => {
    await work(1, 4, signal)
    return { width }
  },
  'demo.build-report': async ({ template }: { template: string }) =>
    permanentFailure(`report template "${template}" does not exist`),
})

function work(minMs: number, maxMs: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, minMs + Math.random() * (maxMs - minMs))
    signal.addEventListener('abort', () => {
      clearTimeout(timer)
      resolve()
    })
  })
}
