/**
 * A claim in a queue with grouped jobs (NewJob.group): it goes round the groups, one job from each
 * in turn, so a group with 10,000 ready jobs does not keep a group with one waiting. The jobs
 * without a group take their turn as one group, before the named ones; the groups come in key
 * order (binary), from the one after the group the queue's last claim served
 * (sql/group-turn-get.sql), and the claim leaves the last group it served for the next
 * (sql/group-turn-put.sql). A group at its limits (groupConcurrency: its live leases; groupRate: its
 * starts in the window) gives its turn to the next; a whole round without a job ends the queue's
 * share. Within a group, priority, then run_at, then id, as everywhere. Each turn is a seek or two
 * (ferry_jobs_ready_grouped), so a claim's cost grows with the jobs it takes and the groups it
 * passes over, not with the backlog.
 */
import { windowAllows, windowOpensAfter, type ClaimLimits } from '../kernel/queue-control.js'
import { nextIdsNamed, readyNames } from './claim-ungrouped.js'
import type { SqliteConnection } from './sqlite-connection.js'

/** A job a claim picked, and its group (null: none). */
export interface Picked {
  id: number
  group: string | null
}

/** The key the jobs without a group go round as: no group key is empty (core/validate.ts). */
const UNGROUPED = ''

/** A group as this claim found it: how many more it may give, how many it gave. */
interface GroupTurns {
  room: number
  taken: number
  /** The starts its window counted, newest first, when the queue has a group rate. */
  counted: number[] | null
}

export function pickRoundTheGroups(
  connection: SqliteConnection,
  queue: string,
  names: readonly string[] | undefined,
  room: number,
  limits: ClaimLimits | undefined,
  at: number,
): { picked: Picked[]; opensAt: number | null } {
  const nextGroup = connection.statement('claim-next-group').pluck()
  const nextOfGroup = connection.statement('claim-next-of-group').pluck()
  const namesJson = names === undefined ? null : JSON.stringify(names)
  // The jobs without a group that this claim could take, in claim order: their turns take them in turn.
  const ungrouped = nextIdsNamed(connection, queue, names ?? readyNames(connection, queue), room)
  let ungroupedTaken = 0
  const groups = new Map<string, GroupTurns>()

  const groupAfter = (key: string): string | undefined =>
    nextGroup.get({ queue, after: key }) as string | undefined
  const first = (): string | undefined =>
    ungroupedTaken < ungrouped.length ? UNGROUPED : groupAfter(UNGROUPED)
  const turnAfter = (key: string | undefined): string | undefined =>
    key === undefined ? first() : (groupAfter(key) ?? first())

  const turnsOf = (group: string): GroupTurns => {
    let turns = groups.get(group)
    if (turns !== undefined) return turns
    let groupRoom = Infinity
    if (limits?.groupConcurrency != null) {
      const live = connection
        .statement('claim-group-live-leases')
        .pluck()
        .get({ queue, group_key: group, now: at }) as number
      groupRoom = Math.min(groupRoom, limits.groupConcurrency - live)
    }
    let counted: number[] | null = null
    if (limits?.groupRate != null) {
      const { limit, perMs } = limits.groupRate
      counted = connection
        .statement('claim-group-starts')
        .pluck()
        .all({ queue, group_key: group, since: at - perMs, limit }) as number[]
      groupRoom = Math.min(groupRoom, windowAllows(limits.groupRate, counted))
    }
    turns = { room: groupRoom, taken: 0, counted }
    groups.set(group, turns)
    return turns
  }

  const takeFrom = (key: string): number | undefined => {
    if (key === UNGROUPED) return ungrouped[ungroupedTaken++]
    const turns = turnsOf(key)
    if (turns.taken >= turns.room) return undefined
    const id = nextOfGroup.get({ queue, group_key: key, names: namesJson, skip: turns.taken }) as
      number | undefined
    if (id !== undefined) turns.taken++
    return id
  }

  const picked: Picked[] = []
  const passedSinceTake = new Set<string>()
  let position = connection.statement('group-turn-get').pluck().get({ queue }) as string | undefined
  let lastServed: string | undefined
  while (picked.length < room) {
    const key = turnAfter(position)
    if (key === undefined || passedSinceTake.has(key)) break
    position = key
    const id = takeFrom(key)
    if (id === undefined) {
      passedSinceTake.add(key)
      continue
    }
    picked.push({ id, group: key === UNGROUPED ? null : key })
    passedSinceTake.clear()
    lastServed = key
  }
  if (lastServed !== undefined) connection.statement('group-turn-put').run({ queue, last_group: lastServed })
  // The groups that this claim left at their limit, their windows full: when the first opens.
  let opensAt: number | null = null
  if (limits?.groupRate != null) {
    for (const turns of groups.values()) {
      if (turns.counted === null || turns.taken < turns.room) continue
      const opens = windowOpensAfter(limits.groupRate, turns.counted, turns.taken, at)
      if (opens !== null) opensAt = Math.min(opensAt ?? Infinity, opens)
    }
  }
  return { picked, opensAt }
}
