// Job events for the admin layer (docs/events.md): subscribe to what jobs do, from any process on
// the same store. The log and its cursor live with the stores (store/events/); this is where a
// program, the `ferry events` command or a dashboard takes them from.
export {
  subscribe,
  JobEventSubscription,
  type SubscribeOptions,
  type EventGap,
} from '../store/events/subscription.js'
export {
  JOB_EVENT_TYPES,
  EVENT_RETENTION,
  type JobEvent,
  type JobEventType,
} from '../store/events/job-event.js'
