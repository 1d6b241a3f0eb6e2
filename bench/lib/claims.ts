import type { Store } from '../../src/store/store.js'

/** Claims before the timed ones, not counted: statement preparation and a cold cache. */
export const WARMUP_CLAIMS = 20
/** Long enough that no claimed job's lease runs out during a scenario. */
const LEASE_MS = 10 * 60_000

/** What a claim scenario times: which queues, in order (only the last has jobs), and how many
 * jobs per claim. */
export interface ClaimShape {
  /** The figure keys' part for this shape. */
  tag: string
  /** The figure labels' part for this shape. */
  text: string
  queues: readonly string[]
  limit: number
  /** Only jobs of these names (ClaimParams.names), as a worker claims; absent: every name. */
  names?: readonly string[]
}

/** The job name claim scenarios enqueue for the claims they time. */
export const OWN_NAME = 'bench.claim'
/** A job name no timed claim asks for: the backlog a names filter must not read. */
export const FOREIGN_NAME = 'bench.other'

/**
 * A claim of one job of OWN_NAME on `queue`, where `foreign` ready jobs of FOREIGN_NAME stand
 * ahead of its own (a higher priority): the flat cost of the names filter.
 */
export function behindForeignShape(queue: string, foreign: number): ClaimShape {
  return {
    tag: 'names_behind',
    text: `claim limit 1 of its name, behind ${foreign.toLocaleString('en-US')} ready jobs of another name`,
    queues: [queue],
    limit: 1,
    names: [OWN_NAME],
  }
}

/** `count` queues of which only the last, `queue`, has jobs: the claim must look past the others. */
export function queuesShape(count: number, queue: string): ClaimShape {
  return {
    tag: `q${count}`,
    text: `claim limit 1 over ${count} queue(s), only the last has jobs`,
    queues: [...Array.from({ length: count - 1 }, (_, i) => `bench-empty-${i + 1}`), queue],
    limit: 1,
  }
}

export interface TopUp {
  /** Once this many jobs (at least one claim's worth) were claimed since the last top-up, `fill`
   * puts as many back. */
  every: number
  /** Makes `count` more jobs ready on the shape's jobs queue (untimed). */
  fill(count: number): Promise<void>
}

/**
 * The claim scenarios' one loop: WARMUP_CLAIMS untimed claims of `shape`, then `claims` timed
 * ones (ms each, one store call each). Every claim must take `shape.limit` jobs, all from the
 * shape's last queue, or the run fails: a figure for claims that found nothing would be meaningless. Claimed jobs stay
 * active; with `topUp` the backlog is kept near its size.
 */
export async function timeClaims(
  store: Pick<Store, 'claim'>,
  shape: ClaimShape,
  claims: number,
  topUp?: TopUp,
): Promise<number[]> {
  const queue = shape.queues[shape.queues.length - 1]
  const latencies: number[] = []
  const topUpAt = topUp === undefined ? Infinity : Math.max(shape.limit, topUp.every)
  let claimed = 0
  for (let i = 0; i < WARMUP_CLAIMS + claims; i++) {
    const start = performance.now()
    const jobs = await store.claim({
      queues: shape.queues,
      names: shape.names,
      limit: shape.limit,
      leaseMs: LEASE_MS,
      workerId: 'bench',
    })
    const ms = performance.now() - start
    const wrong = jobs.some(
      (job) => job.queue !== queue || (shape.names !== undefined && !shape.names.includes(job.name)),
    )
    if (jobs.length !== shape.limit || wrong) {
      throw new Error(`${shape.text}: expected ${shape.limit} job(s) from "${queue}", got ${jobs.length}`)
    }
    if (i >= WARMUP_CLAIMS) latencies.push(ms)
    claimed += jobs.length
    if (claimed >= topUpAt) {
      await topUp!.fill(claimed)
      claimed = 0
    }
  }
  return latencies
}
