import { execFileSync } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { REPO_ROOT } from '../../tests/support/processes.js'

/** The compiled `ferry` command. */
export const DIST_CLI = join(REPO_ROOT, 'dist', 'cli', 'main.js')
/** The compiled package entry (Worker, createExecutor, …). */
export const DIST_INDEX = join(REPO_ROOT, 'dist', 'index.js')

function newestMtimeMs(dir: string): number {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestMtimeMs(path) : statSync(path).mtimeMs)
  }
  return newest
}

function mtimeMs(path: string): number {
  try {
    return statSync(path).mtimeMs
  } catch {
    return 0
  }
}

/**
 * Runs `npm run build` unless dist/ is newer than every file under src/. The strategy scenarios
 * run their workers from dist/, in plain Node: under tsx a child process takes ~0.7 s to start.
 */
export function ensureBuilt(): void {
  const built = Math.min(mtimeMs(DIST_INDEX), mtimeMs(DIST_CLI))
  if (built > newestMtimeMs(join(REPO_ROOT, 'src'))) return
  process.stderr.write('(dist/ is missing or older than src/: npm run build) ')
  execFileSync('npm', ['run', 'build', '--silent'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  })
}
