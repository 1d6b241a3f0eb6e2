import assert from 'node:assert/strict'
import { describe, it } from 'node:test'

import { toJobError } from './job-error.js'

describe('toJobError', () => {
  it('keeps an Error as name, message and stack', () => {
    const error = toJobError(new TypeError('bad thing'))
    assert.equal(error.kind, 'error')
    assert.equal(error.name, 'TypeError')
    assert.equal(error.message, 'bad thing')
    assert.match(error.stack ?? '', /bad thing/)
  })

  it('describes a thrown non-Error as text', () => {
    assert.equal(toJobError('oops').message, 'a non-Error was thrown: "oops"')
    assert.equal(toJobError({ code: 7 }).message, 'a non-Error was thrown: {"code":7}')
    assert.equal(toJobError(undefined).message, 'a non-Error was thrown: undefined')
  })

  it('never throws, whatever the thrown value does when it is read', () => {
    const hostileError = new Error('x')
    // The stack first: replacing it makes V8 format the old one, which reads the message.
    Object.defineProperty(hostileError, 'stack', {
      get() {
        throw new Error('getter')
      },
    })
    Object.defineProperty(hostileError, 'message', {
      get() {
        throw new Error('getter')
      },
    })
    const cycle = Object.create(null) as Record<string, unknown>
    cycle.self = cycle
    const revoked = Proxy.revocable({}, {})
    revoked.revoke()

    const fromError = toJobError(hostileError)
    assert.equal(fromError.kind, 'error')
    assert.equal(fromError.message, '(the message could not be read)')
    assert.equal(fromError.stack, undefined)
    assert.equal(toJobError(cycle).message, 'a non-Error was thrown: an unprintable object')
    assert.equal(toJobError(revoked.proxy).kind, 'non_error')
  })
})
