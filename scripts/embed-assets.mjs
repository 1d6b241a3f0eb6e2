// Embeds each store's query files into a generated TypeScript module, so that no store reads them
// from disk at run time (and the dashboard's stylesheet and script, below): sql/*.sql, migrations/*.sql and functions/*.sql (SQL stores) as `sql`,
// `migrations` and `functions`; lua/*.lua (the Redis store), each with the lua/lib/ files it
// includes, as `scripts`, and the job fields its scripts return as `jobFields`. `--check` exits 1 when a generated file is stale (the
// tests run it).
import { readdirSync, readFileSync, writeFileSync, existsSync, mkdirSync } from 'node:fs'
import { join, basename } from 'node:path'
import { createHash } from 'node:crypto'

const storesDir = new URL('../src/store/', import.meta.url).pathname
const check = process.argv.includes('--check')
let stale = []

/** The names of the files in dir ending in ext, sorted; none when dir does not exist. */
function filesIn(dir, ext) {
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith(ext))
        .sort()
    : []
}

/**
 * The `functions` export: each file of functions/ defines the function it is named after
 * (settle-and-claim.sql: settle_and_claim), with CREATE OR REPLACE, so that migrate() can tell
 * which function a changed or deleted file stands for.
 */
function functionsModule(storeName, functionsDir) {
  const lines = ['export const functions: readonly { name: string; sql: string }[] = [']
  for (const file of filesIn(functionsDir, '.sql')) {
    const name = basename(file, '.sql').replaceAll('-', '_')
    const text = readFileSync(join(functionsDir, file), 'utf8')
    if (!text.includes(`CREATE OR REPLACE FUNCTION :"schema".${name}(`)) {
      throw new Error(
        `src/store/${storeName}/functions/${file} must define its function with CREATE OR REPLACE FUNCTION :"schema".${name}(`,
      )
    }
    lines.push(`  { name: ${JSON.stringify(name)}, sql: ${JSON.stringify(text)} },`)
  }
  lines.push(']', '')
  return lines
}

/**
 * The `scripts`, `library`, `jobFields` and `keyNames` exports. Each lua/*.lua is a script the
 * store runs, made of the files its `-- include:` line names (from lua/lib/, in that order) and then
 * its own text; a file of lua/lib/ is only ever included. The lib files define (locals, functions),
 * except those of BODY_LIBS, which are code every call runs first (namespace-check.lua). Every call
 * starts with prelude.lua's begin(KEYS, ARGV), which sets what the call is about.
 * - `scripts`: each script as one text for EVAL/EVALSHA: its lib files' definitions, begin(), then
 *   its body (BODY_LIBS first). Every call makes all the definitions again.
 * - `library`: every script as a function of one Redis Functions library (FUNCTION LOAD), whose lib
 *   files are defined once, when the library is loaded, and each function's callback runs begin()
 *   and the body. Its name carries a hash of its text, so that two Ferry versions can share a server:
 *   `ferry_<hash>`, its functions `ferry_<hash>_<script>` (function names are global on a server).
 *   A script's `-- flags:` line gives its function's flags (allow-oom, no-writes).
 * `jobFields` is prelude.lua's JOB_FIELDS: the order of the job fields in every job a script
 * returns, which the store decodes. `keyNames` are the names prelude.lua appends to the namespace's
 * root (ROOT .. 'name'), in order: keys.ts's must be the same.
 */
const BODY_LIBS = ['lib/namespace-check.lua']

function luaModule(storeName, luaDir) {
  const where = `src/store/${storeName}/lua`
  const libDir = join(luaDir, 'lib')
  const unused = new Set(filesIn(libDir, '.lua').map((file) => `lib/${file}`))
  const libText = (name, file) => {
    if (!/^lib\/[a-z0-9-]+\.lua$/.test(name) || !existsSync(join(luaDir, name))) {
      throw new Error(`${where}/${file} includes ${name}, which is not a file of ${where}/lib`)
    }
    unused.delete(name)
    const library = readFileSync(join(luaDir, name), 'utf8')
    if (/^-- include:/m.test(library))
      throw new Error(`${where}/${name} is included, so it includes nothing itself`)
    return library
  }
  // The lib files in one order that is every script's own (so each is defined after what it uses).
  const libOrder = []
  const parsed = []
  for (const file of filesIn(luaDir, '.lua')) {
    const text = readFileSync(join(luaDir, file), 'utf8')
    const include = /^-- include: (.+)$/m.exec(text)
    if (include === null)
      throw new Error(`${where}/${file} must say what it includes: -- include: lib/prelude.lua, …`)
    const parts = include[1].split(',').map((name) => name.trim())
    if (parts[0] !== 'lib/prelude.lua') throw new Error(`${where}/${file} must include lib/prelude.lua first`)
    const flags =
      /^-- flags: (.+)$/m
        .exec(text)?.[1]
        .split(',')
        .map((flag) => flag.trim()) ?? []
    for (const flag of flags) {
      if (!['allow-oom', 'no-writes'].includes(flag))
        throw new Error(`${where}/${file}: unknown flag ${flag}`)
    }
    const defs = parts.filter((name) => !BODY_LIBS.includes(name))
    let at = -1
    for (const name of defs) {
      const known = libOrder.indexOf(name)
      if (known === -1) libOrder.splice(at + 1, 0, name)
      else if (known < at)
        throw new Error(`${where}/${file} includes ${name} in another order than other scripts`)
      at = libOrder.indexOf(name)
    }
    const body = [
      ...parts.filter((name) => BODY_LIBS.includes(name)).map((name) => libText(name, file)),
      text,
    ]
    parsed.push({ name: basename(file, '.lua'), file, defs, body: body.join('\n'), flags })
  }

  // The texts are typed as strings, not as their literal types: the compiler refuses to write a
  // declaration whose inferred type is that long (TS7056), which all the scripts' texts passed.
  const lines = [
    `export type ScriptName = ${parsed.map(({ name }) => JSON.stringify(name)).join(' | ')}`,
    '',
    'export const scripts: { readonly [name in ScriptName]: string } = {',
  ]
  for (const { name, file, defs, body } of parsed) {
    const source = [
      '-- KEYS and ARGV as Redis sets them, before prelude.lua names its own (begin).',
      'local CALL_KEYS, CALL_ARGV = KEYS, ARGV',
      ...defs.map((lib) => libText(lib, file)),
      'begin(CALL_KEYS, CALL_ARGV)',
      body,
    ].join('\n')
    lines.push(`  ${JSON.stringify(name)}: ${JSON.stringify(source)},`)
  }
  lines.push('}', '')
  if (unused.size > 0) throw new Error(`no script of ${where} includes ${[...unused].join(', ')}`)

  const libraryText = (libraryName) =>
    [
      `#!lua name=${libraryName}`,
      ...libOrder.map((lib) => libText(lib, 'the library')),
      ...parsed.map(({ name, body, flags }) =>
        [
          `redis.register_function{function_name='${libraryName}_${name.replaceAll('-', '_')}', flags={${flags.map((flag) => `'${flag}'`).join(', ')}}, callback=function(keys, argv)`,
          'begin(keys, argv)',
          body,
          'end}',
        ].join('\n'),
      ),
    ].join('\n')
  const hash = createHash('sha1').update(libraryText('ferry_')).digest('hex').slice(0, 16)
  const libraryName = `ferry_${hash}`
  const functionNames = Object.fromEntries(
    parsed.map(({ name }) => [name, `${libraryName}_${name.replaceAll('-', '_')}`]),
  )
  lines.push(
    `export const library: { readonly name: string; readonly source: string; readonly functions: { readonly [name in ScriptName]: string } } = { name: ${JSON.stringify(libraryName)}, source: ${JSON.stringify(libraryText(libraryName))}, functions: ${JSON.stringify(functionNames)} }`,
    '',
  )
  const prelude = readFileSync(join(libDir, 'prelude.lua'), 'utf8')
  const fields = /^local JOB_FIELDS = \{(.*)\}$/m.exec(prelude)
  if (fields === null) throw new Error(`${where}/lib/prelude.lua must define JOB_FIELDS on one line`)
  const names = [...fields[1].matchAll(/'(\w+)'/g)].map((match) => match[1])
  lines.push(`export const jobFields = ${JSON.stringify(names)} as const`, '')
  // The key names the prelude forms from the namespace's root, in order (keys.ts must agree).
  const keyNames = [...prelude.matchAll(/\bROOT \.\. '([^']+)'/g)].map((match) => match[1])
  if (keyNames.length === 0)
    throw new Error(`${where}/lib/prelude.lua must form its key names as ROOT .. '<name>'`)
  lines.push(`export const keyNames = ${JSON.stringify(keyNames)} as const`, '')
  return lines
}

for (const store of readdirSync(storesDir, { withFileTypes: true })) {
  if (!store.isDirectory()) continue
  const dir = join(storesDir, store.name)
  const sqlDir = join(dir, 'sql')
  const migrationsDir = join(dir, 'migrations')
  const functionsDir = join(dir, 'functions')
  const luaDir = join(dir, 'lua')
  const hasSql = existsSync(sqlDir) || existsSync(migrationsDir)
  const hasLua = existsSync(luaDir)
  if (!hasSql && !hasLua) continue

  const lines = []
  if (hasSql) {
    const sqlFiles = filesIn(sqlDir, '.sql')
    const migrationFiles = filesIn(migrationsDir, '.sql')
    lines.push(
      `// Generated by scripts/embed-assets.mjs from src/store/${store.name}/sql and migrations${existsSync(functionsDir) ? ' and functions' : ''}. DO NOT EDIT.`,
      '// Run `npm run embed` after changing a .sql file.',
      '',
      'export const sql = {',
    )
    for (const file of sqlFiles) {
      const text = readFileSync(join(sqlDir, file), 'utf8')
      lines.push(`  ${JSON.stringify(basename(file, '.sql'))}: ${JSON.stringify(text)},`)
    }
    lines.push(
      '} as const',
      '',
      'export const migrations: readonly { version: number; name: string; sql: string }[] = [',
    )
    for (const file of migrationFiles) {
      const match = /^(\d+)_[a-z0-9_-]+\.sql$/.exec(file)
      if (!match) throw new Error(`migration file name must be NNNN_name.sql: ${file}`)
      const text = readFileSync(join(migrationsDir, file), 'utf8')
      lines.push(
        `  { version: ${Number(match[1])}, name: ${JSON.stringify(basename(file, '.sql'))}, sql: ${JSON.stringify(text)} },`,
      )
    }
    lines.push(']', '')
    if (existsSync(functionsDir)) lines.push(...functionsModule(store.name, functionsDir))
  }
  if (hasLua) {
    if (!hasSql) {
      lines.push(
        `// Generated by scripts/embed-assets.mjs from src/store/${store.name}/lua. DO NOT EDIT.`,
        '// Run `npm run embed` after changing a .lua file.',
        '',
      )
    }
    lines.push(...luaModule(store.name, luaDir))
  }
  const output = lines.join('\n')
  const target = join(dir, 'generated', 'assets.ts')
  const current = existsSync(target) ? readFileSync(target, 'utf8') : ''
  if (current !== output) {
    if (check) stale.push(target)
    else writeFileSync(target, output)
  }
}

/**
 * The dashboard's static files (src/dashboard/assets: .css, .js), each with its content type and a
 * hash of its text: pages link `/assets/<file>?v=<hash>`, so a browser may keep one for a year.
 */
function dashboardModule() {
  const dir = new URL('../src/dashboard/assets/', import.meta.url).pathname
  const types = { '.css': 'text/css; charset=utf-8', '.js': 'text/javascript; charset=utf-8' }
  const lines = [
    '// Generated by scripts/embed-assets.mjs from src/dashboard/assets. DO NOT EDIT.',
    '// Run `npm run embed` after changing a file there.',
    '',
    'export const assets: Readonly<Record<string, { type: string; hash: string; body: string }>> = {',
  ]
  for (const file of readdirSync(dir).sort()) {
    const type = types[file.slice(file.lastIndexOf('.'))]
    if (type === undefined)
      throw new Error(`src/dashboard/assets/${file}: only .css and .js files are served`)
    const body = readFileSync(join(dir, file), 'utf8')
    const hash = createHash('sha256').update(body).digest('hex').slice(0, 12)
    lines.push(
      `  ${JSON.stringify(file)}: { type: ${JSON.stringify(type)}, hash: ${JSON.stringify(hash)}, body: ${JSON.stringify(body)} },`,
    )
  }
  lines.push('}', '')
  const output = lines.join('\n')
  const target = new URL('../src/dashboard/generated/assets.ts', import.meta.url).pathname
  const current = existsSync(target) ? readFileSync(target, 'utf8') : ''
  if (current !== output) {
    if (check) stale.push(target)
    else {
      mkdirSync(new URL('../src/dashboard/generated/', import.meta.url), { recursive: true })
      writeFileSync(target, output)
    }
  }
}
dashboardModule()

if (stale.length > 0) {
  console.error(`stale generated assets (run npm run embed):\n${stale.join('\n')}`)
  process.exit(1)
}
