// Fails when modules under src/ import each other in a circle. Layers already point one way
// (eslint.config.js says which may import which); this catches a circle inside one layer, which
// makes module start-up order matter and the code hard to take apart. Every import counts, `import
// type` too: a type cycle is a design cycle. Usage: node scripts/check-cycles.mjs (exit 1 on a cycle).
import console from 'node:console'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import process from 'node:process'
import { fileURLToPath, URL } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const SRC = join(root, 'src')

/** Every .ts file below dir, tests left out (they import what they test, never the other way). */
function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : []
  })
}

// `import … from '…'`, `export … from '…'`, `import '…'` and `import('…')`: relative ones only.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)'(\.{1,2}\/[^']+)'/g

/** The files a file imports, as absolute paths of .ts files under src/. */
function importsOf(file, known) {
  const text = readFileSync(file, 'utf8')
  const targets = new Set()
  for (const [, specifier] of text.matchAll(SPECIFIER)) {
    const target = resolve(dirname(file), specifier.replace(/\.js$/, '.ts'))
    if (known.has(target)) targets.add(target)
  }
  return [...targets]
}

const files = sourceFiles(SRC)
const known = new Set(files)
const graph = new Map(files.map((file) => [file, importsOf(file, known)]))

// Depth-first search with colours: meeting a module still on the path closes a cycle.
const ON_PATH = 1
const DONE = 2
const colour = new Map()
const cycles = []

function visit(file, path) {
  colour.set(file, ON_PATH)
  path.push(file)
  for (const next of graph.get(file)) {
    if (colour.get(next) === ON_PATH) cycles.push([...path.slice(path.indexOf(next)), next])
    else if (colour.get(next) !== DONE) visit(next, path)
  }
  path.pop()
  colour.set(file, DONE)
}

for (const file of [...files].sort()) if (!colour.has(file)) visit(file, [])

const shown = (file) => relative(root, file).split(sep).join('/')
if (cycles.length > 0) {
  console.error(`${cycles.length} import cycle(s) under src/:`)
  for (const cycle of cycles) console.error(`  ${cycle.map(shown).join(' → ')}`)
  process.exit(1)
}
console.log(`no import cycles among ${files.length} modules under src/`)
