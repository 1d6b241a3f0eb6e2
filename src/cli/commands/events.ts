import type { Command } from 'commander'
import { subscribe, type EventGap, type JobEvent } from '../../admin/events.js'
import { withStore } from '../../admin/with-store.js'
import { ferryStderr } from '../fd-writer.js'
import { painter, toIso, truncate } from '../format.js'
import { existingStore } from '../open.js'

/** The most of a result or an error message a line of text shows. */
const DETAIL_MAX = 120

export function registerEvents(program: Command): void {
  program
    .command('events')
    .description('print job events as they happen, one per line, until Ctrl-C (docs/events.md)')
    .option('--queue <queue>', 'only events of jobs of this queue')
    .option('--json', 'one JSON document per line (shape in docs/cli.md)')
    .action(async (flags: { queue?: string; json?: boolean }) => {
      const stop = new AbortController()
      const onSignal = (): void => stop.abort()
      process.once('SIGINT', onSignal)
      process.once('SIGTERM', onSignal)
      try {
        await withStore(existingStore(program), async (store) => {
          const subscription = await subscribe(store, {
            ...(flags.queue === undefined ? {} : { queues: [flags.queue] }),
            signal: stop.signal,
          })
          // On stderr, so stdout holds only events: said once the subscription is registered.
          ferryStderr.line('ferry: watching job events (Ctrl-C to stop)')
          for await (const item of subscription) {
            process.stdout.write(`${flags.json === true ? JSON.stringify(jsonOf(item)) : lineOf(item)}\n`)
          }
        })
      } finally {
        process.off('SIGINT', onSignal)
        process.off('SIGTERM', onSignal)
      }
    })
}

function jsonOf(item: JobEvent | EventGap): unknown {
  if (item.type === 'gap') return item
  return { ...item, at: toIso(item.at), ...(item.runAt === undefined ? {} : { runAt: toIso(item.runAt) }) }
}

/** One line a person reads: time, type, job, and what the type carries. */
export function lineOf(item: JobEvent | EventGap): string {
  const paint = painter(process.stdout)
  if (item.type === 'gap') {
    return paint('-- gap: some events were not kept (read the jobs to catch up: ferry jobs) --', 'yellow')
  }
  const type = item.type.padEnd(9)
  const colored =
    item.type === 'dead' || item.type === 'cancelled'
      ? paint(type, 'red')
      : item.type === 'failed'
        ? paint(type, 'yellow')
        : type
  return `${toIso(item.at)} ${colored} ${item.queue} ${item.name} #${item.id}${detailOf(item)}`
}

function detailOf(event: JobEvent): string {
  switch (event.type) {
    case 'started':
      return event.attempt === undefined ? '' : ` attempt ${event.attempt}`
    case 'progress':
      return ` ${truncate(JSON.stringify(event.progress ?? null), DETAIL_MAX)}`
    case 'completed':
      return event.resultOmitted === true
        ? ' (result too large to show)'
        : ` ${truncate(JSON.stringify(event.result ?? null), DETAIL_MAX)}`
    case 'failed':
      return ` ${truncate(event.error?.message ?? '', DETAIL_MAX)}; again at ${toIso(event.runAt ?? null)}`
    case 'dead':
    case 'cancelled':
      return event.error === undefined
        ? ''
        : ` ${event.error.kind}: ${truncate(event.error.message, DETAIL_MAX)}`
    case 'enqueued':
    case 'snoozed':
      return event.runAt !== undefined && event.runAt > event.at ? ` runs at ${toIso(event.runAt)}` : ''
    case 'retried':
      return ''
  }
}
