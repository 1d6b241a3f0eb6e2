/**
 * better-sqlite3's native addon, loaded once when this module is imported instead of on the first
 * `new Database()`. Left to itself, better-sqlite3 finds its addon through the `bindings` package,
 * which builds an Error and walks its stack to learn where it was called from: that walk and the
 * addon's dlopen fell inside a worker's start-up, about 8 of the 14 ms from creating a worker to
 * its first job (bench:peers startup, profiled). The addon is loaded here from the path its own
 * build writes it to, so the cost is paid with the other modules at import, and the stack walk not
 * at all.
 *
 * better-sqlite3 is given the addon's path (`nativeBinding`): it requires that path, which Node's
 * module cache answers with the addon loaded here. A package laid out otherwise (a debug build, a
 * bundler that moved the file) leaves the path undefined, and better-sqlite3 then loads the addon
 * its own way: slower to start, the same after.
 */
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

function loadAddon(): string | undefined {
  try {
    const require = createRequire(import.meta.url)
    const path = join(
      dirname(require.resolve('better-sqlite3/package.json')),
      'build',
      'Release',
      'better_sqlite3.node',
    )
    require(path)
    return path
  } catch {
    return undefined
  }
}

/** The addon's path for `new Database(file, { nativeBinding })`, or undefined for better-sqlite3's own way. */
export const nativeAddonPath: string | undefined = loadAddon()
