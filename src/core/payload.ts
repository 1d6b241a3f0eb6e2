/**
 * Payloads and results as Ferry stores them: JSON text, refused whole (a ValidationError naming the
 * path to the bad value) when JSON would silently change what the producer or handler meant.
 */
import { FerryError, ValidationError } from './errors.js'
import { DEFAULT_MAX_PAYLOAD_BYTES } from './job.js'

/**
 * How deep arrays and objects may nest in a payload or a result: `[[1]]` is 2 levels. Far beyond
 * any real document, and well within what JSON.stringify can write (it overflows the call stack
 * past about 4,000 levels on Node 20's default stack).
 */
export const MAX_PAYLOAD_DEPTH = 1000
/**
 * Serialises a payload to JSON text, refusing anything JSON would silently change: NaN and
 * Infinity (become null), undefined in arrays (becomes null), functions, symbols, BigInt, cycles,
 * and objects such as Map, Set or Error that serialise to `{}`. Objects with toJSON (Date) are
 * taken as they serialise. An undefined object property is dropped, as in JSON. Arrays and objects
 * may nest at most MAX_PAYLOAD_DEPTH levels deep. Whatever goes wrong, the error is a
 * ValidationError with code invalid_payload (or payload_too_large).
 */
export function serializePayload(
  payload: unknown,
  field = 'payload',
  maxBytes = DEFAULT_MAX_PAYLOAD_BYTES,
): string {
  if (payload === undefined) {
    throw new ValidationError('invalid_payload', field, 'is undefined; send null or a JSON value')
  }
  let json: string
  try {
    if (!isPlainJson(payload, 0)) assertJsonValue(payload, field)
    json = JSON.stringify(payload)
  } catch (error) {
    if (error instanceof FerryError) throw error
    // A toJSON method or a getter of the payload threw (or a Proxy refused to be read): still
    // bad input, so still a ValidationError, with what was thrown as its cause.
    const thrown = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
    const refusal = new ValidationError('invalid_payload', field, `could not be read as JSON (${thrown})`)
    refusal.cause = error
    throw refusal
  }
  // UTF-8 is at most 3 bytes per UTF-16 unit: skip the byte count when it cannot exceed the limit.
  if (json.length * 3 > maxBytes) {
    const bytes = Buffer.byteLength(json, 'utf8')
    if (bytes > maxBytes) {
      throw new ValidationError(
        'payload_too_large',
        field,
        `is ${bytes} bytes of JSON, over the limit of ${maxBytes} bytes`,
      )
    }
  }
  return json
}

/**
 * How deep isPlainJson recurses before it hands the value to the full walk: deeper than payloads
 * nest in practice, and far from the call stack's limit.
 */
const PLAIN_JSON_DEPTH = 64

/**
 * The common case, checked fast: strings, finite numbers, booleans, null, and arrays and plain
 * objects of them, without toJSON, within PLAIN_JSON_DEPTH levels. True means JSON writes the
 * value as it is; false only means "not shown here", and assertJsonValue then walks it again with
 * the paths it needs for its errors (a cycle, too, lands there, at the depth limit). The full walk
 * alone cost about a microsecond of a bulk enqueue's few per job: it keeps a path for every member.
 */
function isPlainJson(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true
    case 'number':
      return Number.isFinite(value)
    case 'object': {
      if (value === null) return true
      if (depth === PLAIN_JSON_DEPTH) return false
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          const item: unknown = value[i]
          if (item === undefined || !isPlainJson(item, depth + 1)) return false
        }
        return true
      }
      if (Object.getPrototypeOf(value) !== Object.prototype) return false
      const object = value as Record<string, unknown>
      if (typeof object.toJSON === 'function') return false
      for (const key of Object.keys(object)) {
        const prop = object[key]
        // An undefined property is left out, as JSON does.
        if (prop !== undefined && !isPlainJson(prop, depth + 1)) return false
      }
      return true
    }
    default:
      return false
  }
}

/** An array or object whose members are being checked, and the next member to check. */
type OpenValue =
  | { kind: 'array'; value: readonly unknown[]; field: string; next: number }
  | { kind: 'object'; value: Readonly<Record<string, unknown>>; field: string; keys: string[]; next: number }
  /** An object with toJSON: its one member is what toJSON returned, which JSON writes in its place. */
  | { kind: 'replaced'; value: object; field: string; replacement: unknown; next: number }

/** The path of a member of `parent` (`payload.a`, `payload[2]`); a replacement keeps its object's. */
function memberField(parent: OpenValue, key: string | number): string {
  switch (parent.kind) {
    case 'array':
      return `${parent.field}[${key}]`
    case 'object':
      return `${parent.field}.${key}`
    case 'replaced':
      return parent.field
  }
}

/** The path of the value at `key` of `parent`, or of the root when there is no parent. */
function pathOf(rootField: string, parent: OpenValue | null, key: string | number): string {
  return parent === null ? rootField : memberField(parent, key)
}

/**
 * Walks the value depth first, in the order JSON.stringify writes it, with a stack of its own
 * rather than recursion: a value nested thousands deep must get a ValidationError, not overflow
 * the call stack (a RangeError that took down `ferry enqueue --stdin` with all its good lines).
 * `onPath` holds the objects from the root to the current one, so a cycle is seen where it closes
 * in O(1) per value, and the same object met twice side by side is no cycle.
 */
function assertJsonValue(root: unknown, rootField: string): void {
  const open: OpenValue[] = []
  const onPath = new Set<object>()

  /**
   * Checks one value; an array or object is opened, its members checked after it. Its path is
   * built only when needed (an error, an opened value): most values are leaves that pass.
   */
  const visit = (value: unknown, parent: OpenValue | null, key: string | number): void => {
    switch (typeof value) {
      case 'string':
      case 'boolean':
        return
      case 'number':
        if (!Number.isFinite(value)) {
          throw new ValidationError(
            'invalid_payload',
            pathOf(rootField, parent, key),
            `${String(value)} is not a JSON value`,
          )
        }
        return
      case 'object':
        break
      default:
        throw new ValidationError(
          'invalid_payload',
          pathOf(rootField, parent, key),
          `a ${typeof value} is not a JSON value`,
        )
    }
    if (value === null) return
    if (onPath.has(value)) {
      throw new ValidationError(
        'invalid_payload',
        pathOf(rootField, parent, key),
        'refers back to itself (a cycle cannot be JSON)',
      )
    }
    let opened: OpenValue
    if (Array.isArray(value)) {
      opened = { kind: 'array', value, field: pathOf(rootField, parent, key), next: 0 }
    } else {
      const toJSON = (value as { toJSON?: unknown }).toJSON
      if (typeof toJSON === 'function') {
        const replacement: unknown = toJSON.call(value)
        if (replacement === value) return
        opened = { kind: 'replaced', value, field: pathOf(rootField, parent, key), replacement, next: 0 }
      } else {
        const proto: unknown = Object.getPrototypeOf(value)
        if (proto !== Object.prototype && proto !== null) {
          const kind = (value as { constructor?: { name?: string } }).constructor?.name ?? 'object'
          throw new ValidationError(
            'invalid_payload',
            pathOf(rootField, parent, key),
            `a ${kind} is not a plain JSON object; convert it to a plain object or array first`,
          )
        }
        const object = value as Record<string, unknown>
        opened = {
          kind: 'object',
          value: object,
          field: pathOf(rootField, parent, key),
          keys: Object.keys(object),
          next: 0,
        }
      }
    }
    // An object replaced by its toJSON counts as a level too: a toJSON that returns a new such
    // object every time could otherwise chain forever.
    if (open.length >= MAX_PAYLOAD_DEPTH) {
      throw new ValidationError(
        'invalid_payload',
        rootField,
        `is nested more than ${MAX_PAYLOAD_DEPTH} levels deep (arrays and objects within one another)`,
      )
    }
    open.push(opened)
    onPath.add(value)
  }

  visit(root, null, '')
  while (open.length > 0) {
    const current = open[open.length - 1]!
    switch (current.kind) {
      case 'array':
        if (current.next < current.value.length) {
          const index = current.next++
          const item = current.value[index]
          if (item === undefined) {
            throw new ValidationError(
              'invalid_payload',
              memberField(current, index),
              'undefined in an array would become null',
            )
          }
          visit(item, current, index)
          continue
        }
        break
      case 'object':
        if (current.next < current.keys.length) {
          const key = current.keys[current.next++]!
          const prop = current.value[key]
          // An undefined property is left out, as JSON does.
          if (prop !== undefined) visit(prop, current, key)
          continue
        }
        break
      case 'replaced':
        if (current.next++ === 0) {
          visit(current.replacement, current, '')
          continue
        }
        break
    }
    // Every member checked: the value leaves the path.
    open.pop()
    onPath.delete(current.value)
  }
}
