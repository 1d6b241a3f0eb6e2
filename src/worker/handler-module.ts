import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { FerryError, ValidationError } from '../core/errors.js'
import type { JobHandlers } from '../core/handler.js'
import { NAME_PATTERN } from '../core/validate.js'

const TYPESCRIPT_EXTENSION = /\.[cm]?tsx?$/

/** Handlers given directly, or the path or URL of a module whose default export maps names to them. */
export type HandlerSource = JobHandlers | string | URL

/**
 * Loads and checks a handler module. The module is always named by the worker's own
 * configuration, never by job data. A `.ts` module loads when the process already runs with a
 * TypeScript loader, or when tsx is installed where the module lives (it is then registered).
 */
export async function loadHandlers(source: HandlerSource): Promise<JobHandlers> {
  if (typeof source !== 'string' && !(source instanceof URL)) return checkHandlers(source, 'handlers')
  const url = source instanceof URL ? source : pathToFileURL(resolve(source))
  const where = source instanceof URL ? source.href : source
  if (url.protocol === 'file:' && !existsSync(url)) {
    throw new ValidationError('invalid_option', 'handlers', `no handler module at ${where}`)
  }
  let module: { default?: unknown }
  try {
    module = (await import(url.href)) as { default?: unknown }
  } catch (error) {
    const unknownExtension = (error as { code?: string }).code === 'ERR_UNKNOWN_FILE_EXTENSION'
    if (unknownExtension && (await registerTypeScript(url))) {
      // The failed import stays cached under its URL: import it again under another one.
      const retry = new URL(url.href)
      retry.searchParams.set('loader', 'tsx')
      module = (await import(retry.href)) as { default?: unknown }
    } else if (unknownExtension && TYPESCRIPT_EXTENSION.test(url.pathname)) {
      // Node 20 cannot load TypeScript by itself: its own message says only "Unknown file extension".
      throw new FerryError(
        'invalid_option',
        `cannot load the handler module ${where}: it is TypeScript, which Ferry loads with tsx, and tsx ` +
          'is not installed in its project: install it there (npm install --save-dev tsx), run Ferry ' +
          'under a TypeScript loader (node --import tsx), or compile the module to JavaScript',
        { cause: error },
      )
    } else {
      throw new FerryError(
        'invalid_option',
        `cannot load the handler module ${where}: ${(error as Error).message}`,
        {
          cause: error,
        },
      )
    }
  }
  return checkHandlers(module.default, `the default export of ${where}`)
}

function checkHandlers(value: unknown, what: string): JobHandlers {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ValidationError(
      'invalid_option',
      'handlers',
      `${what} must be an object mapping job names to handler functions`,
    )
  }
  const handlers = value as Record<string, unknown>
  for (const [name, handler] of Object.entries(handlers)) {
    if (!NAME_PATTERN.test(name)) {
      throw new ValidationError('invalid_name', `handlers.${name}`, 'is not a valid job name')
    }
    if (typeof handler !== 'function') {
      throw new ValidationError(
        'invalid_option',
        `handlers.${name}`,
        `must be a function (got ${typeof handler})`,
      )
    }
  }
  if (Object.keys(handlers).length === 0) {
    throw new ValidationError('invalid_option', 'handlers', `${what} has no handlers`)
  }
  return handlers as JobHandlers
}

/** Registers tsx's ESM loader from the module's own project, if it has one. */
async function registerTypeScript(moduleUrl: URL): Promise<boolean> {
  try {
    // Resolved through package.json: require.resolve would pick tsx's CommonJS entry, whose
    // register() does not load ES modules.
    const packageJson = createRequire(moduleUrl).resolve('tsx/package.json')
    const { exports } = JSON.parse(readFileSync(packageJson, 'utf8')) as {
      exports: Record<string, { import?: string | { default?: string } }>
    }
    const entry = exports['./esm/api']?.import
    const path = typeof entry === 'string' ? entry : entry?.default
    if (path === undefined) return false
    const { register } = (await import(pathToFileURL(join(dirname(packageJson), path)).href)) as {
      register: () => unknown
    }
    register()
    return true
  } catch {
    return false
  }
}
