import { claimLatencyScenario } from '../scenarios/claim-latency.js'
import { dashboardBulkScenario, postgresDashboardBulkScenario } from '../scenarios/dashboard-bulk.js'
import { dashboardListsScenario, postgresDashboardListsScenario } from '../scenarios/dashboard-lists.js'
import { enqueue1kScenario } from '../scenarios/enqueue-1k.js'
import { enqueueBulkScenario } from '../scenarios/enqueue-bulk.js'
import { enqueueLongLineScenario } from '../scenarios/enqueue-long-line.js'
import { enqueueConcurrentScenario } from '../scenarios/enqueue-concurrent.js'
import { enqueueSerialScenario } from '../scenarios/enqueue-serial.js'
import {
  eventsLatencyScenario,
  eventsSerialEnqueueScenario,
  postgresEventsLatencyScenario,
  redisEventsLatencyScenario,
} from '../scenarios/events.js'
import { fsyncRateScenario } from '../scenarios/fsync-rate.js'
import { idleCpuScenario } from '../scenarios/idle-cpu.js'
import { isolationCostScenario } from '../scenarios/isolation-cost.js'
import {
  postgresChurnAgedScenario,
  postgresChurnIdleScenario,
  postgresChurnScenario,
} from '../scenarios/postgres-churn.js'
import {
  metricsOverheadScenario,
  metricsScrapeScenario,
  postgresMetricsOverheadScenario,
  postgresMetricsScrapeScenario,
  redisMetricsOverheadScenario,
} from '../scenarios/metrics.js'
import { postgresClaimScenario } from '../scenarios/postgres-claim.js'
import { postgresEnqueueScenario } from '../scenarios/postgres-enqueue.js'
import { postgresIdleCpuScenario } from '../scenarios/postgres-idle-cpu.js'
import { postgresPlansScenario } from '../scenarios/postgres-plans.js'
import {
  postgresPrefetchDefaultScenario,
  prefetchDefaultScenario,
  redisPrefetchDefaultScenario,
} from '../scenarios/prefetch-default.js'
import { postgresThroughputScenario } from '../scenarios/postgres-throughput.js'
import { postgresWakeScenario } from '../scenarios/postgres-wake.js'
import { redisClaimScenario } from '../scenarios/redis-claim.js'
import { redisEnqueueScenario } from '../scenarios/redis-enqueue.js'
import { redisIdleCpuScenario } from '../scenarios/redis-idle-cpu.js'
import { redisMemoryScenario } from '../scenarios/redis-memory.js'
import { redisThroughputScenario } from '../scenarios/redis-throughput.js'
import {
  postgresQueueControlScenario,
  queueControlScenario,
  redisQueueControlScenario,
} from '../scenarios/queue-control.js'
import { redisWakeScenario } from '../scenarios/redis-wake.js'
import {
  postgresRetentionScenario,
  redisRetentionScenario,
  retentionScenario,
} from '../scenarios/retention.js'
import {
  postgresSchedulesScenario,
  redisSchedulesScenario,
  schedulesScenario,
} from '../scenarios/schedules.js'
import { strategyOverheadScenario } from '../scenarios/strategy-overhead.js'
import { supervisorCpuScenario } from '../scenarios/supervisor-cpu.js'
import { tracingOverheadScenario } from '../scenarios/tracing-overhead.js'
import { wakeLatencyScenario } from '../scenarios/wake-latency.js'
import { workerThroughputScenario } from '../scenarios/worker-throughput.js'
import type { ScenarioDef } from './types.js'

/** Every scenario, in the order `npm run bench` runs them. */
export const SCENARIOS: readonly ScenarioDef[] = [
  fsyncRateScenario,
  enqueueSerialScenario,
  eventsSerialEnqueueScenario,
  eventsLatencyScenario,
  enqueueConcurrentScenario,
  enqueue1kScenario,
  enqueueBulkScenario,
  enqueueLongLineScenario,
  claimLatencyScenario,
  workerThroughputScenario,
  prefetchDefaultScenario,
  idleCpuScenario,
  wakeLatencyScenario,
  strategyOverheadScenario,
  isolationCostScenario,
  supervisorCpuScenario,
  queueControlScenario,
  schedulesScenario,
  retentionScenario,
  metricsScrapeScenario,
  metricsOverheadScenario,
  tracingOverheadScenario,
  postgresEnqueueScenario,
  postgresThroughputScenario,
  postgresPrefetchDefaultScenario,
  postgresWakeScenario,
  postgresClaimScenario,
  postgresIdleCpuScenario,
  postgresPlansScenario,
  postgresChurnScenario,
  postgresChurnAgedScenario,
  postgresChurnIdleScenario,
  postgresQueueControlScenario,
  postgresSchedulesScenario,
  postgresRetentionScenario,
  postgresMetricsScrapeScenario,
  postgresMetricsOverheadScenario,
  postgresEventsLatencyScenario,
  redisEnqueueScenario,
  redisThroughputScenario,
  redisPrefetchDefaultScenario,
  redisClaimScenario,
  redisWakeScenario,
  redisMemoryScenario,
  redisIdleCpuScenario,
  redisQueueControlScenario,
  redisSchedulesScenario,
  redisRetentionScenario,
  redisMetricsOverheadScenario,
  redisEventsLatencyScenario,
  dashboardListsScenario,
  dashboardBulkScenario,
  postgresDashboardListsScenario,
  postgresDashboardBulkScenario,
]
