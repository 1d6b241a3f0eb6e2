// Every way a handler can misbehave, in one module, by job name. Each is what a real handler may
// do by mistake; the suite checks that each ends in its defined outcome with its cause stored.
import { writeFileSync } from 'node:fs'

const cycle = { name: 'cycle' }
cycle.self = cycle

export default {
  ok: (payload) => ({ ok: true, payload }),
  'throws-string': () => {
    throw 'a plain string, not an Error'
  },
  'throws-number': () => {
    throw 42
  },
  'throws-null': () => {
    throw null
  },
  'throws-undefined': () => {
    throw undefined
  },
  'throws-cycle': () => {
    throw cycle
  },
  'throws-bad-getter': () => {
    const error = new Error('hidden')
    Object.defineProperty(error, 'message', {
      get() {
        throw new Error('the message getter throws')
      },
    })
    throw error
  },
  'throws-null-prototype-cycle': () => {
    const value = Object.create(null)
    value.self = value
    throw value
  },
  'rejects-non-error': async () => {
    await new Promise((resolve) => setTimeout(resolve, 5))
    throw { code: 'E_NOT_AN_ERROR', detail: [1, 2, 3] }
  },
  'never-resolves': () => new Promise(() => {}),
  'blocks-loop': (payload) => {
    if (payload?.pidFile) writeFileSync(payload.pidFile, String(process.pid))
    for (;;) {
      // spin
    }
  },
  exits: () => process.exit(3),
  'kills-self': () => {
    process.kill(process.pid, 'SIGKILL')
  },
  oom: () => {
    const hoard = []
    for (;;) hoard.push(new Array(100_000).fill(hoard.length))
  },
}
