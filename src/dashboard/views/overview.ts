// The overview: every queue's jobs by state, its pause and limits, and its latency (how long the
// oldest ready job has waited), with pause and resume at hand.
import { html } from 'hono/html'

import type { QueueReport, StatsReport } from '../../admin/inspect.js'
import type { ThroughputMinute } from '../../admin/workers.js'
import { throughputChart } from './chart.js'
import type { QueueLimits } from '../../store/store.js'
import { count, span, when } from './format.js'
import { actionButton, type Html, type PageContext } from './layout.js'

const COLUMNS = [
  ['ready', 'Ready'],
  ['scheduled', 'Scheduled'],
  ['active', 'Active'],
  ['completed', 'Completed'],
  ['dead', 'Dead'],
] as const

export function overviewView(
  page: PageContext,
  stats: StatsReport,
  minutes: readonly ThroughputMinute[],
  workerCount: number,
): Html {
  const now = stats.at
  const jobsLink = (queue: string | null, state: string, n: number) =>
    html`<a href="${page.base}/jobs?${new URLSearchParams({ ...(queue === null ? {} : { queue }), state })}"
      >${count(n)}</a
    >`
  return html`<h1>Overview</h1>
    <div class="panel">
      ${
        stats.queues.length === 0
          ? html`<p class="muted">No jobs in the store yet.</p>`
          : html`<table class="queues">
              <thead>
                <tr>
                  <th>Queue</th>
                  ${COLUMNS.map(([, label]) => html`<th class="num">${label}</th>`)}
                  <th class="num">Done / min</th>
                  <th class="num">Dead / min</th>
                  <th class="num">Latency</th>
                  <th>Control</th>
                  <th></th>
                </tr>
              </thead>
              <tbody>
                ${stats.queues.map(
                  (queue) =>
                    html`<tr data-queue="${queue.queue}">
                      <td>
                        <a href="${page.base}/queues/${encodeURIComponent(queue.queue)}">${queue.queue}</a>
                      </td>
                      ${COLUMNS.map(([key]) => html`<td class="num">${jobsLink(queue.queue, key, queue[key])}</td>`)}
                      <td class="num">${count(queue.recentCompletedCount)}</td>
                      <td class="num">${count(queue.recentDeadCount)}</td>
                      <td class="num">
                        ${queue.oldestReadyAt === null ? html`<span class="muted">—</span>` : span(Math.max(0, now - queue.oldestReadyAt))}
                      </td>
                      <td>${controlOf(queue)}</td>
                      <td>
                        ${
                          queue.paused === null
                            ? actionButton(
                                page,
                                `/api/queues/${encodeURIComponent(queue.queue)}/pause`,
                                'Pause',
                              )
                            : actionButton(
                                page,
                                `/api/queues/${encodeURIComponent(queue.queue)}/resume`,
                                'Resume',
                              )
                        }
                      </td>
                    </tr>`,
                )}
              </tbody>
              ${
                stats.queues.length > 1
                  ? html`<tfoot>
                      <tr>
                        <td>All</td>
                        ${COLUMNS.map(([key]) => html`<td class="num">${jobsLink(null, key, stats.totals[key])}</td>`)}
                        <td class="num">${count(stats.totals.recentCompletedCount)}</td>
                        <td class="num">${count(stats.totals.recentDeadCount)}</td>
                        <td></td>
                        <td></td>
                        <td></td>
                      </tr>
                    </tfoot>`
                  : ''
              }
            </table>`
      }
    </div>
    <h2>Throughput, last 3 hours</h2>
    <div class="panel">${throughputChart(minutes)}</div>
    <p class="muted">
      <a href="${page.base}/workers">${workerCount === 1 ? '1 worker' : `${count(workerCount)} workers`}</a>
      running. Counted ${when(now)}; this page follows the store by itself.
    </p>`
}

/** Paused (since when, why) and the limits in force, in a few words. */
export function controlOf(queue: QueueReport): Html {
  const limits = describeLimits(queue.limits)
  return html`${
    queue.paused === null
      ? ''
      : html`<span class="badge paused" title="${queue.paused.reason ?? ''}"
          >paused ${when(queue.paused.at)}</span
        > `
  }${limits === '' ? '' : html`<span class="muted">${limits}</span>`}`
}

export function describeLimits(limits: QueueLimits): string {
  const parts: string[] = []
  if (limits.concurrency !== null) parts.push(`${limits.concurrency} at once`)
  if (limits.rate !== null) parts.push(`${limits.rate.limit} per ${span(limits.rate.perMs)}`)
  if (limits.groupConcurrency !== null) parts.push(`${limits.groupConcurrency} per group at once`)
  if (limits.groupRate !== null)
    parts.push(`${limits.groupRate.limit} per group per ${span(limits.groupRate.perMs)}`)
  return parts.join(', ')
}
