/**
 * Whether a store may still be called, as every backend checks it from here: a call after close()
 * is refused with StoreClosedError naming the call, before it touches a connection or a file.
 */
import { StoreClosedError } from '../../core/errors.js'

export function assertOpen(closed: boolean, operation: string): void {
  if (closed) throw new StoreClosedError(operation)
}
