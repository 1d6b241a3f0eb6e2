// Embeds each store's query files into a generated TypeScript module, so that no store reads them
// from disk at run time: sql/*.sql, migrations/*.sql and functions/*.sql (SQL stores) as `sql`,
// `migrations` and `functions`; lua/*.lua (the Redis store), each with the lua/lib/ files it
// includes, as `scripts`, and the job fields its scripts return as `jobFields`. `--check` exits 1 when a generated file is stale (the
// tests run it).
import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs'
import { join, basename } from 'node:path'

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
 * The `scripts` and `jobFields` exports. Each lua/*.lua is a script the store runs, made of the
 * files its `-- include:` line names (from lua/lib/, in that order) and then its own text; a file
 * of lua/lib/ is only ever included. `jobFields` is prelude.lua's JOB_FIELDS: the order of the job
 * fields in every job a script returns, which the store decodes. `keyNames` are the names prelude.lua
 * appends to the namespace's root (ROOT .. 'name'), in order: keys.ts's must be the same.
 */
function luaModule(storeName, luaDir) {
  const where = `src/store/${storeName}/lua`
  const libDir = join(luaDir, 'lib')
  const unused = new Set(filesIn(libDir, '.lua').map((file) => `lib/${file}`))
  const lines = ['export const scripts = {']
  for (const file of filesIn(luaDir, '.lua')) {
    const text = readFileSync(join(luaDir, file), 'utf8')
    const include = /^-- include: (.+)$/m.exec(text)
    if (include === null)
      throw new Error(`${where}/${file} must say what it includes: -- include: lib/prelude.lua, …`)
    const parts = include[1].split(',').map((name) => name.trim())
    const sources = parts.map((name) => {
      if (!/^lib\/[a-z0-9-]+\.lua$/.test(name) || !existsSync(join(luaDir, name))) {
        throw new Error(`${where}/${file} includes ${name}, which is not a file of ${where}/lib`)
      }
      unused.delete(name)
      const library = readFileSync(join(luaDir, name), 'utf8')
      if (/^-- include:/m.test(library))
        throw new Error(`${where}/${name} is included, so it includes nothing itself`)
      return library
    })
    const source = [...sources, text].join('\n')
    lines.push(`  ${JSON.stringify(basename(file, '.lua'))}: ${JSON.stringify(source)},`)
  }
  lines.push('} as const', '')
  if (unused.size > 0) throw new Error(`no script of ${where} includes ${[...unused].join(', ')}`)
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

if (stale.length > 0) {
  console.error(`stale generated assets (run npm run embed):\n${stale.join('\n')}`)
  process.exit(1)
}
