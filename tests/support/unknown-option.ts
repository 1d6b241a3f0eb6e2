/**
 * The check the tests of unknown options share: the error is the ValidationError that
 * assertKnownKeys throws, with the path of the key, the known key it suggests (or none), and a list
 * of the known options that includes `known`.
 */
import assert from 'node:assert/strict'

import { ValidationError } from '../../src/index.js'

/** For assert.throws and assert.rejects: validates the error, or fails saying what differs. */
export function unknownOption(
  field: string,
  suggestion: string | null,
  known: readonly string[],
): (error: unknown) => true {
  return (error) => {
    assert.ok(error instanceof ValidationError, `expected a ValidationError, got ${String(error)}`)
    assert.equal(error.code, 'invalid_option')
    assert.equal(error.field, field)
    assert.ok(error.message.startsWith(`${field}: unknown option`), error.message)
    if (suggestion === null) assert.doesNotMatch(error.message, /did you mean/)
    else assert.ok(error.message.includes(`did you mean ${suggestion}?`), error.message)
    const list = /\(known options: (.*)\)$/.exec(error.message)?.[1]?.split(', ') ?? []
    for (const key of known) assert.ok(list.includes(key), `${key} is not listed in: ${error.message}`)
    return true
  }
}
