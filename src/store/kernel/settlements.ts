/**
 * Settlements, as every backend's settle gets them from here: each checked the same way before
 * anything is written (so a bad batch is refused whole, with the same error on every store), and
 * the per-item results folded back into input order from what the store's statement or script
 * reported for the items it was sent.
 */
import { ValidationError } from '../../core/errors.js'
import type { Settlement } from '../../core/outcome.js'
import { assertInstant } from '../params.js'
import { checkReport } from './job-reports.js'
import type { SettleResult } from '../store.js'

const KINDS: ReadonlySet<string> = new Set<Settlement['kind']>(['completed', 'retry', 'snoozed', 'dead'])

/**
 * Throws a ValidationError for the first settlement of an unknown kind, without a valid runAt, or
 * with a malformed report (progress, logs).
 */
export function checkSettlements(settlements: readonly Settlement[]): void {
  settlements.forEach((s, i) => {
    if (!KINDS.has(s.kind)) {
      throw new ValidationError(
        'invalid_option',
        `settlements[${i}].kind`,
        `unknown kind ${JSON.stringify((s as { kind: unknown }).kind)}`,
      )
    }
    if (s.kind === 'retry' || s.kind === 'snoozed') assertInstant(s.runAt, `settlements[${i}].runAt`)
    checkReport(s.report, `settlements[${i}].report`)
  })
}

/**
 * One result per item, in input order: `otherwise` for every item, except those at the positions
 * (0-based) given for another result. Later marks win over earlier ones.
 */
export function foldResults(
  count: number,
  otherwise: SettleResult,
  marks: readonly (readonly [SettleResult, Iterable<number>])[],
): SettleResult[] {
  const results = new Array<SettleResult>(count).fill(otherwise)
  for (const [result, positions] of marks) for (const position of positions) results[position] = result
  return results
}
