/**
 * Job ids, as every backend gets them from here: decimal digits without a leading zero, checked
 * before they reach a query or a key (an id of no valid form names no job), and ordered as numbers.
 */

/**
 * The check of a job id for a store whose ids have at most `maxDigits` digits (the width of its id
 * column or counter): anything else, whatever its type, is no job of that store.
 */
export function jobIdCheck(maxDigits: number): (id: unknown) => id is string {
  const pattern = new RegExp(`^[1-9]\\d{0,${maxDigits - 1}}$`)
  return (id: unknown): id is string => typeof id === 'string' && pattern.test(id)
}

/** Job ids are decimal digits: compare them as numbers, shorter first, without parsing. */
export function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0)
}
