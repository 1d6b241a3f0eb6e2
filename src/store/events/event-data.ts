// What the stores share about an event's stored form: its extra fields as one JSON text, and the
// result left out when it is too large to carry (a hint, not a second copy of the job).
import type { JobEvent, NewJobEvent } from './job-event.js'
import { RESULT_MAX_BYTES } from './job-event.js'

type EventData = Pick<NewJobEvent, 'attempt' | 'runAt' | 'result' | 'resultOmitted' | 'error' | 'progress'>

/** The fields beyond id, queue, name, type and time, as JSON; null when there are none. */
export function encodeEventData(event: NewJobEvent): string | null {
  const data: EventData = {}
  if (event.attempt !== undefined) data.attempt = event.attempt
  if (event.runAt !== undefined) data.runAt = event.runAt
  if (event.error !== undefined) data.error = event.error
  if (event.progress !== undefined) data.progress = event.progress
  if (event.resultOmitted) data.resultOmitted = true
  if (event.result !== undefined) {
    const text = JSON.stringify(event.result)
    if (text !== undefined && Buffer.byteLength(text) > RESULT_MAX_BYTES) data.resultOmitted = true
    else data.result = event.result
  }
  return Object.keys(data).length === 0 ? null : JSON.stringify(data)
}

export function decodeEvent(
  cursor: string,
  head: Pick<NewJobEvent, 'type' | 'id' | 'queue' | 'name' | 'at'>,
  data: string | null,
): JobEvent {
  const event: JobEvent = {
    cursor,
    type: head.type,
    id: head.id,
    queue: head.queue,
    name: head.name,
    at: head.at,
  }
  return data === null ? event : { ...event, ...(JSON.parse(data) as EventData) }
}
