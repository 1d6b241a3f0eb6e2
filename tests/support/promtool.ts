/**
 * `promtool check metrics` (from Prometheus; Debian's prometheus package has it): the lint
 * Prometheus applies to an exposition. Missing outside CI, the tests that use it are skipped,
 * saying why; under CI=true they fail (services.ts).
 */
import { spawn, spawnSync } from 'node:child_process'

/** Null when promtool runs here, else why not. */
export function promtoolMissingReason(): string | null {
  const probe = spawnSync('promtool', ['--version'], { stdio: 'ignore' })
  return probe.error === undefined && probe.status === 0
    ? null
    : 'promtool is not installed (apt-get install prometheus)'
}

/** What promtool says is wrong with the exposition: '' when it passes. */
export function promtoolProblems(exposition: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code) =>
      resolve(code === 0 && output.trim() === '' ? '' : output.trim() || `exit ${code}`),
    )
    child.stdin.end(exposition)
  })
}
