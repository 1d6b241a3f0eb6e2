/**
 * What the dashboard does to jobs, and which jobs: the actions by the names its URLs and forms use,
 * each run through the admin layer's bulk runner (one job, a selection, or all a filter matches),
 * and the list filters as a query string gives them.
 */
import { runBulkAction, type BulkAction } from '../admin/bulk.js'
import { ValidationError } from '../core/errors.js'
import type { JobId, JobState } from '../core/job.js'
import type { ListJobsFilter, Store } from '../store/store.js'

/** The actions, by the name a URL or a form gives: what each applies to, and how it is said done. */
export const JOB_ACTIONS = {
  retry: { label: 'Retry (dead jobs)', verb: 'retried' },
  cancel: { label: 'Cancel (not finished)', verb: 'cancelled' },
  'run-now': { label: 'Run now (scheduled)', verb: 'made ready' },
  priority: { label: 'Change priority (not started)', verb: 'reprioritised' },
  delete: { label: 'Delete (not running)', verb: 'deleted' },
} as const

export type JobActionName = keyof typeof JOB_ACTIONS

export function bulkActionOf(name: string, body: Record<string, unknown>): BulkAction {
  switch (name) {
    case 'retry':
    case 'cancel':
    case 'delete':
      return name
    case 'run-now':
      return 'runNow'
    case 'priority':
      return { priority: priorityOf(body.priority) }
    default:
      throw new ValidationError(
        'invalid_option',
        'action',
        `must be one of ${Object.keys(JOB_ACTIONS).join(', ')} (got "${name}")`,
      )
  }
}

/** The most ids one request may name: more is "all matching", which runs in the background. */
export const SELECTION_MAX = 1000

/** Applies an action to the jobs named, now; jobs in a state it does not apply to are skipped. */
export async function actOnIds(
  store: Store,
  name: string,
  ids: readonly JobId[],
  body: Record<string, unknown>,
): Promise<{ message: string; changed: number; skipped: number }> {
  const action = bulkActionOf(name, body)
  if (ids.length === 0) throw new ValidationError('invalid_option', 'ids', 'select at least one job')
  if (ids.length > SELECTION_MAX) {
    throw new ValidationError(
      'invalid_option',
      'ids',
      `at most ${SELECTION_MAX} jobs at once (got ${ids.length})`,
    )
  }
  const { changed } = await runBulkAction(store, { action, ids })
  const skipped = ids.length - changed
  const verb = JOB_ACTIONS[name as JobActionName].verb
  const message =
    ids.length === 1 && changed === 1
      ? `job ${ids[0]} ${verb}`
      : `${changed} of ${ids.length} jobs ${verb}${skipped > 0 ? ` (${skipped} skipped: not in a state that allows it)` : ''}`
  return { message, changed, skipped }
}

/** "Enqueued within" choices of the list's filter, by the value the form sends. */
export const CREATED_WITHIN = {
  '15m': 15 * 60_000,
  '1h': 3_600_000,
  '24h': 86_400_000,
  '7d': 7 * 86_400_000,
} as const

/**
 * The list's filters from a query string (or a form): queue, state, name, unique key, enqueued
 * within, and a payload that jobs contain (a JSON object; only where the store can search payloads).
 * The store checks each value before it reads anything; here only the form's own shapes are.
 */
export function filterOf(get: (name: string) => string | undefined, now = Date.now()): ListJobsFilter {
  const text = (name: string) => {
    const value = get(name)?.trim()
    return value === undefined || value === '' ? null : value
  }
  const filter: ListJobsFilter = {}
  const queue = text('queue')
  const state = text('state')
  const name = text('name')
  const uniqueKey = text('uniqueKey')
  const within = text('within')
  const payload = text('payload')
  if (queue !== null) filter.queue = queue
  if (state !== null) filter.state = state as JobState
  if (name !== null) filter.name = name
  if (uniqueKey !== null) filter.uniqueKey = uniqueKey
  if (within !== null) {
    const span = CREATED_WITHIN[within as keyof typeof CREATED_WITHIN]
    if (span === undefined) {
      throw new ValidationError(
        'invalid_option',
        'within',
        `must be one of ${Object.keys(CREATED_WITHIN).join(', ')}`,
      )
    }
    filter.createdAfter = now - span
  }
  if (payload !== null) {
    let parsed: unknown
    try {
      parsed = JSON.parse(payload)
    } catch {
      throw new ValidationError(
        'invalid_option',
        'payload',
        'must be a JSON object, such as {"user":{"id":7}}',
      )
    }
    filter.payloadContains = parsed as Record<string, unknown>
  }
  return filter
}

/** A filter in a few words, for an operation's title: "dead jobs of mail named send". */
export function describeFilter(filter: ListJobsFilter): string {
  const parts = [filter.state === undefined ? 'jobs' : `${filter.state} jobs`]
  if (filter.queue !== undefined) parts.push(`of ${filter.queue}`)
  if (filter.name !== undefined) parts.push(`named ${filter.name}`)
  if (filter.uniqueKey !== undefined) parts.push(`with unique key ${filter.uniqueKey}`)
  if (filter.createdAfter !== undefined)
    parts.push(`enqueued since ${new Date(filter.createdAfter).toISOString()}`)
  if (filter.payloadContains !== undefined)
    parts.push(`whose payload contains ${JSON.stringify(filter.payloadContains)}`)
  return parts.join(' ')
}

function priorityOf(value: unknown): number {
  const text = value === undefined || value === null ? '' : String(value).trim()
  if (!/^-?\d+$/.test(text)) {
    throw new ValidationError('invalid_option', 'priority', `must be a whole number (got "${text}")`)
  }
  return Number(text)
}
