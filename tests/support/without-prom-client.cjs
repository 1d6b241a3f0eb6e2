// Loaded with `--require` (or NODE_OPTIONS): prom-client cannot be loaded in this process, as for
// a user who never installed it, while every other module loads as usual. It hooks Module._load,
// which tsx (run after it) leaves alone, where tsx replaces the resolver it would have found.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS preload, by design
const Module = require('node:module')

const load = Module._load
Module._load = function (request, ...rest) {
  if (request === 'prom-client') {
    throw Object.assign(new Error("Cannot find module 'prom-client'"), { code: 'MODULE_NOT_FOUND' })
  }
  return load.call(this, request, ...rest)
}
