import { mkdirSync, mkdtempSync, rmSync, rmdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

import { REPO_ROOT } from '../../tests/support/processes.js'

/**
 * Benchmark databases live on the repository's own disk, in `.bench-tmp/` (gitignored), never in
 * /tmp, which may be a RAM disk: an fsync there costs nothing and would flatter every figure.
 */
export const BENCH_TMP = join(REPO_ROOT, '.bench-tmp')

/** Runs `fn` with a fresh empty directory under .bench-tmp/ and removes it afterwards. */
export async function withTempDir<T>(label: string, fn: (dir: string) => Promise<T>): Promise<T> {
  mkdirSync(BENCH_TMP, { recursive: true })
  const dir = mkdtempSync(join(BENCH_TMP, `${label}-`))
  try {
    return await fn(dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
    try {
      rmdirSync(BENCH_TMP) // only succeeds when no other run is using it
    } catch {
      // not empty: another run is in progress
    }
  }
}

/** Size in bytes of a file, 0 when it does not exist. */
export function fileSize(path: string): number {
  try {
    return statSync(path).size
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0
    throw error
  }
}
