/**
 * Interim: the cron expression check and the slot key, until the slot arithmetic lands here.
 */
import { Cron } from 'croner'

import { ValidationError } from './errors.js'

export class CronSchedule {
  readonly cron: string
  readonly timeZone: string
  private readonly pattern: Cron

  constructor(cron: string, timeZone = 'UTC', fields = { cron: 'cron', timeZone: 'timeZone' }) {
    if (typeof cron !== 'string' || cron.length === 0 || cron.length > 200 || /^\d{4}-/.test(cron)) {
      throw new ValidationError('invalid_option', fields.cron, 'must be a cron expression')
    }
    try {
      new Intl.DateTimeFormat('en-US', { timeZone })
    } catch {
      throw new ValidationError(
        'invalid_option',
        fields.timeZone,
        `is not a known IANA time zone: ${String(timeZone)}`,
      )
    }
    try {
      this.pattern = new Cron(cron, { timezone: timeZone, paused: true })
    } catch (error) {
      throw new ValidationError('invalid_option', fields.cron, (error as Error).message)
    }
    this.cron = cron
    this.timeZone = timeZone
  }

  nextAfter(afterMs: number): number | null {
    return this.pattern.nextRun(new Date(afterMs))?.getTime() ?? null
  }
}

export function slotKey(id: string, slot: number): string {
  return `cron:${id}:${new Date(slot).toISOString()}`
}
