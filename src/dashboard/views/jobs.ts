// The job list (filters, keyset pages, a selection to act on) and one job in full.
import { html } from 'hono/html'

import { JOB_STATES, type Job } from '../../core/job.js'
import type { JobPage } from '../../store/store.js'
import { json, when } from './format.js'
import { actionButton, csrfField, stateBadge, type Html, type PageContext } from './layout.js'

/** The list's filters, as the query string gives them (checked by the store before it reads). */
export interface JobFilters {
  queue?: string
  state?: Job['state']
  id?: string
}

/** What may be done to a selection of jobs, by the state each must be in (others are skipped). */
export const BULK_ACTIONS = {
  retry: 'Retry (dead jobs)',
  cancel: 'Cancel (not finished)',
  'run-now': 'Run now (scheduled or ready)',
} as const

export function jobsView(
  page: PageContext,
  filters: JobFilters,
  queues: readonly string[],
  result: JobPage,
  cursor: string | null,
): Html {
  const query = (extra: Record<string, string>) =>
    new URLSearchParams({
      ...(filters.queue === undefined ? {} : { queue: filters.queue }),
      ...(filters.state === undefined ? {} : { state: filters.state }),
      ...extra,
    }).toString()
  return html`<h1>Jobs</h1>
    <div class="panel">
      <form class="filters" method="get" action="${page.base}/jobs">
        <label
          >Queue<select name="queue">
            <option value="">any</option>
            ${queues.map(
              (queue) => html`<option${queue === filters.queue ? ' selected' : ''}>${queue}</option>`,
            )}
          </select></label
        >
        <label
          >State<select name="state">
            <option value="">any</option>
            ${JOB_STATES.map(
              (state) => html`<option${state === filters.state ? ' selected' : ''}>${state}</option>`,
            )}
          </select></label
        >
        <button type="submit" class="primary">Filter</button>
      </form>
      <form class="filters" method="get" action="${page.base}/jobs" role="search">
        <label>Job id<input name="id" inputmode="numeric" size="12" value="${filters.id ?? ''}" /></label>
        <button type="submit">Open</button>
      </form>
    </div>
    <form
      method="post"
      action="${page.base}/api/jobs/bulk"
      class="panel"
      data-confirm="Apply to the selected jobs?"
    >
      ${csrfField(page)}<input type="hidden" name="_return" value="${page.here}" />
      ${
        page.readOnly
          ? ''
          : html`<div class="actions">
              <select name="action" aria-label="Action">
                ${Object.entries(BULK_ACTIONS).map(
                  ([value, label]) => html`<option value="${value}">${label}</option>`,
                )}</select
              ><button type="submit">Apply to selected</button>
            </div>`
      }
      ${
        result.jobs.length === 0
          ? html`<p class="muted">No job matches.</p>`
          : html`<table class="jobs">
              <thead>
                <tr>
                  ${page.readOnly ? '' : html`<th><input type="checkbox" data-select-all aria-label="Select all" /></th>`}
                  <th>Id</th>
                  <th>Queue</th>
                  <th>Name</th>
                  <th>State</th>
                  <th class="num">Attempts</th>
                  <th class="num">Priority</th>
                  <th>Run at</th>
                  <th>Finished</th>
                  <th>Last error</th>
                </tr>
              </thead>
              <tbody>
                ${result.jobs.map(
                  (job) =>
                    html`<tr data-job="${job.id}">
                      ${page.readOnly ? '' : html`<td><input type="checkbox" name="ids" value="${job.id}" aria-label="Select job ${job.id}" /></td>`}
                      <td><a href="${page.base}/jobs/${job.id}">${job.id}</a></td>
                      <td>${job.queue}</td>
                      <td>${job.name}</td>
                      <td>${stateBadge(job.state)}</td>
                      <td class="num">${job.attempts} / ${job.maxAttempts}</td>
                      <td class="num">${job.priority}</td>
                      <td>${when(job.runAt)}</td>
                      <td>${when(job.finishedAt)}</td>
                      <td class="wrap">
                        ${job.lastError === null ? '' : truncate(job.lastError.message, 120)}
                      </td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }
    </form>
    <div class="pager">
      ${cursor === null ? '' : html`<a href="${page.base}/jobs?${query({})}">« First page</a>`}${
        result.nextCursor === null
          ? ''
          : html`<a rel="next" href="${page.base}/jobs?${query({ cursor: result.nextCursor })}"
              >Next page »</a
            >`
      }
    </div>`
}

export function jobView(page: PageContext, job: Job): Html {
  const path = `/api/jobs/${job.id}`
  const unstarted = job.state === 'scheduled' || job.state === 'ready'
  const finished = job.state === 'completed' || job.state === 'dead'
  return html`<h1>Job ${job.id} ${stateBadge(job.state)}</h1>
    <span data-refresh-next="${finished ? 0 : 1000}"></span>
    ${
      page.readOnly || job.state === 'completed'
        ? ''
        : html`<div class="actions panel">
            ${job.state === 'dead' ? actionButton(page, `${path}/retry`, 'Retry') : ''}
            ${unstarted ? actionButton(page, `${path}/run-now`, 'Run now') : ''}
            ${finished ? '' : actionButton(page, `${path}/cancel`, 'Cancel', { danger: true, confirm: `Cancel job ${job.id}?` })}
            ${
              unstarted && !page.readOnly
                ? html`<form class="inline actions" method="post" action="${page.base}${path}/priority">
                    ${csrfField(page)}<input type="hidden" name="_return" value="${page.here}" /><label
                      >Priority<input
                        name="priority"
                        type="number"
                        step="1"
                        size="6"
                        value="${job.priority}" /></label
                    ><button type="submit">Change</button>
                  </form>`
                : ''
            }
          </div>`
    }
    <div class="panel">
      <dl class="fields">
        <dt>Queue</dt>
        <dd><a href="${page.base}/jobs?${new URLSearchParams({ queue: job.queue })}">${job.queue}</a></dd>
        <dt>Name</dt>
        <dd>${job.name}</dd>
        <dt>Attempts</dt>
        <dd>${job.attempts} of ${job.maxAttempts}</dd>
        <dt>Priority</dt>
        <dd>${job.priority}</dd>
        <dt>Created</dt>
        <dd>${when(job.createdAt)}</dd>
        <dt>Run at</dt>
        <dd>${when(job.runAt)}</dd>
        <dt>Updated</dt>
        <dd>${when(job.updatedAt)}</dd>
        <dt>Finished</dt>
        <dd>${when(job.finishedAt)}</dd>
        ${
          job.workerId === null
            ? ''
            : html`<dt>Lease holder</dt>
                <dd>${job.workerId}, lease until ${when(job.leaseExpiresAt)}</dd>`
        }
        ${
          job.uniqueKey === null
            ? ''
            : html`<dt>Unique key</dt>
                <dd>${job.uniqueKey}</dd>`
        }
        ${
          job.group === null
            ? ''
            : html`<dt>Group</dt>
                <dd>${job.group}</dd>`
        }
        ${
          job.expiresAt === null
            ? ''
            : html`<dt>Start deadline</dt>
                <dd>${when(job.expiresAt)}</dd>`
        }
        ${
          job.timeoutMs === null
            ? ''
            : html`<dt>Timeout</dt>
                <dd>${job.timeoutMs} ms</dd>`
        }
        ${
          job.schedule === null
            ? ''
            : html`<dt>Schedule</dt>
                <dd>${job.schedule.id}, slot ${when(job.schedule.slot)}</dd>`
        }
      </dl>
    </div>
    <h2>Payload</h2>
    <pre class="payload">${json(job.payload)}</pre>
    ${
      job.progress === null || job.progress === undefined
        ? ''
        : html`<h2>Progress</h2>
            <pre class="progress">${json(job.progress)}</pre>`
    }
    ${
      job.logs.length === 0
        ? ''
        : html`<h2>Log</h2>
            <pre class="logs">${job.logs.join('\n')}</pre>`
    }
    ${
      job.state === 'completed'
        ? html`<h2>Result</h2>
            <pre class="result">${json(job.result)}</pre>`
        : ''
    }
    ${
      job.lastError === null
        ? ''
        : html`<h2>Last error <span class="muted">(${job.lastError.kind})</span></h2>
            <pre class="error">
${job.lastError.stack ?? `${job.lastError.name === undefined ? '' : `${job.lastError.name}: `}${job.lastError.message}`}${job.lastError.stderrTail === undefined ? '' : `\n\nstderr:\n${job.lastError.stderrTail}`}</pre>`
    }`
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`
}
