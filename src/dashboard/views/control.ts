// A queue's page (its counts, pause and limits), the schedules, the sign-in form and error pages.
import { html } from 'hono/html'

import type { QueueReport } from '../../admin/inspect.js'
import type { ScheduleReport } from '../../admin/schedules.js'
import { count, span, when } from './format.js'
import { actionButton, csrfField, type Html, type PageContext } from './layout.js'
import { controlOf } from './overview.js'

export function queueView(page: PageContext, queue: QueueReport): Html {
  const path = `/api/queues/${encodeURIComponent(queue.queue)}`
  const { limits } = queue
  const field = (name: string, label: string, value: number | null | undefined) =>
    html`<label
      >${label}<input
        name="${name}"
        type="number"
        min="1"
        step="1"
        size="6"
        value="${value ?? ''}"
        ${page.readOnly ? ' disabled' : ''}
    /></label>`
  return html`<h1>Queue ${queue.queue}</h1>
    <div class="panel">
      <dl class="fields">
        ${(['ready', 'scheduled', 'active', 'completed', 'dead'] as const).map(
          (state) =>
            html`<dt>${state}</dt>
              <dd>
                <a href="${page.base}/jobs?${new URLSearchParams({ queue: queue.queue, state })}"
                  >${count(queue[state])}</a
                >
              </dd>`,
        )}
        <dt>Latency</dt>
        <dd>
          ${queue.oldestReadyAt === null ? 'no job waiting' : span(Math.max(0, Date.now() - queue.oldestReadyAt))}
        </dd>
        <dt>Control</dt>
        <dd>
          ${controlOf(queue)}${queue.paused?.reason ? html` <span class="muted">— ${queue.paused.reason}</span>` : ''}
        </dd>
      </dl>
    </div>
    <div class="panel actions">
      ${queue.paused === null ? actionButton(page, `${path}/pause`, 'Pause queue') : actionButton(page, `${path}/resume`, 'Resume queue')}
    </div>
    <h2>Limits</h2>
    <form class="panel filters" method="post" action="${page.base}${path}/limits">
      ${csrfField(page)}<input type="hidden" name="_return" value="${page.here}" />
      ${field('concurrency', 'At once', limits.concurrency)}
      ${field('rateLimit', 'Starts', limits.rate?.limit)}
      ${field('ratePerMs', 'per (ms)', limits.rate?.perMs)}
      ${field('groupConcurrency', 'Per group at once', limits.groupConcurrency)}
      ${page.readOnly ? '' : html`<button type="submit" class="primary">Save limits</button>`}
    </form>
    <p class="muted">An empty field removes that limit.</p>`
}

export function schedulesView(page: PageContext, schedules: readonly ScheduleReport[]): Html {
  return html`<h1>Schedules</h1>
    <div class="panel">
      ${
        schedules.length === 0
          ? html`<p class="muted">No schedules.</p>`
          : html`<table class="schedules">
              <thead>
                <tr>
                  <th>Schedule</th>
                  <th>Cron</th>
                  <th>Job</th>
                  <th>Next</th>
                  <th>Last slot</th>
                  <th>Last job</th>
                  <th></th>
                </tr>
              </thead>
              <tbody>
                ${schedules.map((schedule) => {
                  const path = `/api/schedules/${encodeURIComponent(schedule.id)}`
                  return html`<tr data-schedule="${schedule.id}">
                    <td>
                      ${schedule.id}${schedule.pausedAt === null ? '' : html` <span class="badge paused">paused ${when(schedule.pausedAt)}</span>`}
                    </td>
                    <td><code>${schedule.cron}</code> <span class="muted">${schedule.timeZone}</span></td>
                    <td>${schedule.job.queue ?? 'default'} / ${schedule.job.name}</td>
                    <td>${when(schedule.upcoming[0] ?? null)}</td>
                    <td>${when(schedule.lastSlot)}</td>
                    <td>
                      ${schedule.lastJobId === null ? '' : html`<a href="${page.base}/jobs/${schedule.lastJobId}">${schedule.lastJobId}</a>`}
                    </td>
                    <td class="actions">
                      ${actionButton(page, `${path}/run`, 'Run now')}${
                        schedule.pausedAt === null
                          ? actionButton(page, `${path}/pause`, 'Pause')
                          : actionButton(page, `${path}/resume`, 'Resume')
                      }
                    </td>
                  </tr>`
                })}
              </tbody>
            </table>`
      }
    </div>`
}

export function signInView(page: PageContext, message: string | null): Html {
  return html`<div class="login panel">
    <h1>Sign in to Ferry</h1>
    ${message === null ? '' : html`<div class="notice error" role="alert">${message}</div>`}
    <form method="post" action="${page.base}/login">
      <label
        >Dashboard token<input
          name="token"
          type="password"
          autocomplete="current-password"
          required
          autofocus
      /></label>
      <button type="submit" class="primary">Sign in</button>
    </form>
  </div>`
}

export function errorView(status: number, message: string): Html {
  return html`<h1>${status === 404 ? 'Not found' : 'Something went wrong'}</h1>
    <div class="notice error" role="alert">${message}</div>`
}
