/**
 * Milliseconds on a clock that never steps (its origin is arbitrary): for durations and deadlines
 * that a change of the wall clock must not move.
 *
 * process.hrtime rather than performance.now(): the global `performance` loads node:perf_hooks on
 * its first use, 1.3-2 ms that fell inside a worker's start-up, before its first job.
 */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6
}
