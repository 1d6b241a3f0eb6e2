/**
 * Driver errors, as every backend turns them into Ferry's from here: a FerryError (one of the
 * store's own checks, thrown inside a transaction) passes through as it is, and what the driver
 * threw becomes the error the backend describes it as: a message, for a StoreUnavailableError
 * carrying the driver's error as its cause, or an error of its own. What is not the driver's
 * (the backend says null) passes through too.
 */
import { FerryError, StoreUnavailableError } from '../../core/errors.js'

export function wrapDriverError(
  error: unknown,
  describe: (error: unknown) => string | FerryError | null,
): unknown {
  if (error instanceof FerryError) return error
  const described = describe(error)
  if (described === null) return error
  return typeof described === 'string' ? new StoreUnavailableError(described, { cause: error }) : described
}
