/**
 * Options objects checked key by key: a misspelt option must be an error that names it (with the
 * key most likely meant), never a silent fall back to a default.
 */
import { ValidationError } from './errors.js'

/**
 * The keys of an options type as a list, written as `{ key: true, … }` so that the compiler holds
 * it to the type: a key of the type missing from it, or one the type does not have, is a type
 * error. So an option added to the type cannot be forgotten by assertKnownKeys.
 */
export function optionKeys<T extends object>(keys: Record<keyof T, true>): readonly string[] {
  return Object.freeze(Object.keys(keys))
}

/**
 * Refuses an options object with a key that is not one of `known`. A misspelt option must be an
 * error, not fall back to its default in silence: a typo of a PostgreSQL `schema` or a Redis
 * `namespace` would write into another application's queue. `field` is the path of the object
 * (`backoff`, `jobs[3]`), '' at the top; the error's field is the path of the unknown key.
 */
export function assertKnownKeys(value: unknown, known: readonly string[], field: string): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ValidationError(
      'invalid_option',
      field === '' ? 'options' : field,
      `must be an object of options (got ${describeValue(value)})`,
    )
  }
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue
    const suggestion = closestKey(key, known)
    throw new ValidationError(
      'invalid_option',
      field === '' ? key : `${field}.${key}`,
      `unknown option${suggestion === null ? '' : `, did you mean ${suggestion}?`} (${
        known.length === 0 ? 'none are known here' : `known options: ${known.join(', ')}`
      })`,
    )
  }
}

/** Misspellings this far from a known key (letters inserted, deleted or replaced) get a suggestion. */
const SUGGESTION_DISTANCE = 2

/**
 * The known key a misspelt one most likely meant: the one nearest to it, ignoring case, when it is
 * at most SUGGESTION_DISTANCE edits away and no other is as near. Null when none or several are.
 */
function closestKey(key: string, known: readonly string[]): string | null {
  let best: string | null = null
  let bestDistance = Math.min(SUGGESTION_DISTANCE, key.length - 1) + 1
  let tied = false
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase())
    if (distance < bestDistance) {
      best = candidate
      bestDistance = distance
      tied = false
    } else if (distance === bestDistance) {
      tied = true
    }
  }
  return tied ? null : best
}

/** Levenshtein distance: the fewest single-character insertions, deletions or replacements. */
function editDistance(a: string, b: string): number {
  // One row of the dynamic-programming table at a time: previous[j] is the distance between the
  // first i - 1 characters of a and the first j of b.
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const replace = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, replace)
    }
    previous = current
  }
  return previous[b.length]!
}

/** A value as an error message shows it: short, and never the whole of a large one. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value)
  if (value === null) return 'null'
  if (value === undefined) return 'undefined'
  if (Array.isArray(value)) return 'an array'
  return `a ${typeof value}`
}
