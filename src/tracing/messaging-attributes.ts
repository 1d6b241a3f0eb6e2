/**
 * The OpenTelemetry messaging conventions' attribute names Ferry sets (semantic-conventions,
 * messaging-spans.md; still marked Development there, so spelt out here rather than imported
 * from a package whose names may move). Ferry's own attributes are `ferry.*`.
 */
import type { Attributes } from '@opentelemetry/api'
export const MESSAGING_SYSTEM = 'messaging.system'
export const MESSAGING_OPERATION_NAME = 'messaging.operation.name'
export const MESSAGING_OPERATION_TYPE = 'messaging.operation.type'
export const MESSAGING_DESTINATION_NAME = 'messaging.destination.name'
export const MESSAGING_MESSAGE_ID = 'messaging.message.id'
export const MESSAGING_BATCH_MESSAGE_COUNT = 'messaging.batch.message_count'
export const ERROR_TYPE = 'error.type'

export const FERRY_JOB_NAME = 'ferry.job.name'
export const FERRY_JOB_ATTEMPT = 'ferry.job.attempt'
/** completed, retry, dead, snoozed or lease_lost: what became of an attempt. */
export const FERRY_JOB_OUTCOME = 'ferry.job.outcome'
/** False when an enqueue found its unique key held and made no job. */
export const FERRY_JOB_CREATED = 'ferry.job.created'
export const FERRY_SCHEDULE_ID = 'ferry.schedule.id'

/** `messaging.system`: a background-job queue is not one of the conventions' brokers, so it names itself. */
export const SYSTEM = 'ferry'

/** The attributes every span of this operation carries; `queue` null when a batch spans several. */
export function messagingAttributes(operation: 'send' | 'process', queue: string | null): Attributes {
  const attributes: Attributes = {
    [MESSAGING_SYSTEM]: SYSTEM,
    [MESSAGING_OPERATION_NAME]: operation,
    [MESSAGING_OPERATION_TYPE]: operation,
  }
  if (queue !== null) attributes[MESSAGING_DESTINATION_NAME] = queue
  return attributes
}
