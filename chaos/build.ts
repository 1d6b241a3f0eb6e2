/**
 * The chaos processes start often (every kill is followed by a restart), and under tsx a start
 * costs 1.5–2 s on a loaded 2-core machine: a worker would often die before it claimed anything.
 * So their sources are stripped of types into plain JavaScript once per run (TypeScript's
 * transpileModule: no type check, that is lint's job) and import the built library from dist/;
 * a plain `node` start costs about 0.3 s.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import ts from 'typescript'

const CHAOS_DIR = fileURLToPath(new URL('.', import.meta.url))
const DIST_DIR = fileURLToPath(new URL('../dist/', import.meta.url))
/** What the processes run, and every chaos module they import. */
const SOURCES = ['config', 'history', 'random', 'recording-store', 'handlers', 'worker', 'producer']

export interface ProcessScripts {
  worker: string
  producer: string
  handlers: string
}

export function buildProcessScripts(outDir: string): ProcessScripts {
  if (!existsSync(join(DIST_DIR, 'index.js'))) {
    throw new Error('chaos runs the built library: run `npm run build` first')
  }
  mkdirSync(outDir, { recursive: true })
  for (const name of SOURCES) {
    const source = readFileSync(join(CHAOS_DIR, `${name}.ts`), 'utf8')
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        verbatimModuleSyntax: false,
      },
      fileName: `${name}.ts`,
    })
    // '../src/x.js' becomes the built dist/x.js.
    const linked = outputText.replace(/(['"])\.\.\/src\/([^'"]+)\1/g, (_, quote: string, path: string) =>
      [quote, pathToFileURL(join(DIST_DIR, path)).href, quote].join(''),
    )
    writeFileSync(join(outDir, `${name}.js`), linked)
  }
  return {
    worker: join(outDir, 'worker.js'),
    producer: join(outDir, 'producer.js'),
    handlers: join(outDir, 'handlers.js'),
  }
}
