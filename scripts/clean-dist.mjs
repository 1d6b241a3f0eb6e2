// Empties dist/ before a build: tsc never deletes what it wrote for a source file since moved or
// removed, and the package would ship (and its source maps name) files that no longer exist.
import { rmSync } from 'node:fs'
import { URL } from 'node:url'

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true })
