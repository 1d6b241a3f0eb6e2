/**
 * The chaos processes start often (every kill is followed by a restart), and under tsx a start
 * costs 1.5–2 s on a loaded 2-core machine: a worker would often die before it claimed anything.
 * So their sources are stripped of types into plain JavaScript once per run (TypeScript's
 * transpileModule: no type check, that is lint's job) and import the built library from dist/;
 * a plain `node` start costs about 0.3 s.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import ts from 'typescript'

const CHAOS_DIR = fileURLToPath(new URL('.', import.meta.url))
const SRC_DIR = fileURLToPath(new URL('../src/', import.meta.url))
const DIST_DIR = fileURLToPath(new URL('../dist/', import.meta.url))
/** What the job chaos processes run, and every chaos module they import. */
const SOURCES = ['config', 'history', 'random', 'recording-store', 'handlers', 'worker', 'producer']

export interface ProcessScripts {
  worker: string
  producer: string
  handlers: string
}

export function buildProcessScripts(outDir: string): ProcessScripts {
  buildScripts(outDir, SOURCES)
  return {
    worker: join(outDir, 'worker.js'),
    producer: join(outDir, 'producer.js'),
    handlers: join(outDir, 'handlers.js'),
  }
}

/**
 * Strips the chaos modules named (paths under chaos/, without '.ts') into `outDir`, in the same
 * layout, so their imports of each other still resolve; their imports of src/ point at dist/.
 */
export function buildScripts(outDir: string, sources: readonly string[]): void {
  if (!existsSync(join(DIST_DIR, 'index.js'))) {
    throw new Error('chaos runs the built library: run `npm run build` first')
  }
  for (const name of sources) {
    const sourcePath = join(CHAOS_DIR, `${name}.ts`)
    const { outputText } = ts.transpileModule(readFileSync(sourcePath, 'utf8'), {
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        verbatimModuleSyntax: false,
      },
      fileName: `${name}.ts`,
    })
    // '../src/x.js' (or '../../src/x.js' one folder down) becomes the built dist/x.js.
    const linked = outputText.replace(
      /(['"])((?:\.\.\/)+src\/[^'"]+)\1/g,
      (match, quote: string, path: string) => {
        const inSrc = relative(SRC_DIR, resolve(dirname(sourcePath), path))
        if (inSrc.startsWith(`..${sep}`)) return match
        return [quote, pathToFileURL(join(DIST_DIR, inSrc)).href, quote].join('')
      },
    )
    const outPath = join(outDir, `${name}.js`)
    mkdirSync(dirname(outPath), { recursive: true })
    writeFileSync(outPath, linked)
  }
}
