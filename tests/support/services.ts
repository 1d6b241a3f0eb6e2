/**
 * The one rule for tests that need something outside Node (the PostgreSQL or Redis test server, the
 * redis-server or initdb binary): when it is missing, the tests are skipped visibly, with the
 * reason, except under CI (CI=true), where that fails the run: a CI run must never pass by
 * skipping a store. Each harness only says why its service is missing (a probe that resolves to
 * null when it is there); these two functions apply the rule.
 */
import { it } from 'node:test'

/**
 * For one test's options: `{}` when nothing is missing, `{ skip: why }` otherwise; under CI a
 * missing service throws instead, which fails the test file.
 */
export function skipUnlessAvailable(why: string | null): { skip?: string } {
  if (why === null) return {}
  if (process.env.CI === 'true')
    throw new Error(`${why}: under CI=true this fails the run instead of skipping`)
  return { skip: why }
}

/**
 * For a whole test file: declares its tests with `define` when nothing is missing; otherwise one
 * test stands for the file, skipped with the reason, or failing under CI.
 */
export async function whenAvailable(
  why: Promise<string | null>,
  define: () => void | Promise<void>,
): Promise<void> {
  const reason = await why
  if (reason === null) return define()
  if (process.env.CI === 'true') {
    it(`needs: ${reason}`, () => {
      throw new Error(`${reason}: under CI=true this fails the run instead of skipping`)
    })
  } else {
    it('needs a service that is missing here', { skip: reason }, () => {})
  }
}
