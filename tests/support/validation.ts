import assert from 'node:assert/strict'

import { ValidationError, type ValidationErrorCode } from '../../src/core/errors.js'

/** Asserts that `fn` throws a ValidationError with this code and field, and returns it. */
export function throwsValidation(
  fn: () => unknown,
  code: ValidationErrorCode,
  field: string,
): ValidationError {
  let caught: unknown
  try {
    fn()
  } catch (error) {
    caught = error
  }
  assert.ok(caught instanceof ValidationError, `expected a ValidationError, got ${String(caught)}`)
  assert.equal(caught.code, code, caught.message)
  assert.equal(caught.field, field, caught.message)
  return caught
}
