// The job list (filters, keyset pages, a selection to act on) and one job in full.
import { html } from 'hono/html'

import { JOB_STATES, type Job } from '../../core/job.js'
import type { JobPage } from '../../store/store.js'
import { CREATED_WITHIN, JOB_ACTIONS } from '../job-actions.js'
import type { Operation } from '../operations.js'
import { count, json, when } from './format.js'
import { actionButton, csrfField, stateBadge, type Html, type PageContext } from './layout.js'

export interface JobsViewData {
  /** The filter form's fields as the query gave them (queue, state, name, uniqueKey, within, payload). */
  form: Record<string, string>
  queues: readonly string[]
  result: JobPage
  /** The cursor of this page; null on the first. */
  cursor: string | null
  /** Whether the store can filter by payload (StoreCapabilities.payloadSearch). */
  payloadSearch: boolean
  operations: readonly Operation[]
}

export function jobsView(page: PageContext, data: JobsViewData): Html {
  const { form, result, cursor } = data
  const filterQuery = Object.fromEntries(Object.entries(form).filter(([, value]) => value !== ''))
  const query = (extra: Record<string, string>) =>
    new URLSearchParams({ ...filterQuery, ...extra }).toString()
  const option = (value: string, label: string, selected: string) =>
    html`<option value="${value}" ${value === selected ? ' selected' : ''}>${label}</option>`
  return html`<h1>Jobs</h1>
    ${operationsView(page, data.operations)}
    <div class="panel">
      <form class="filters" method="get" action="${page.base}/jobs">
        <label
          >Queue<select name="queue">
            ${option('', 'any', form.queue ?? '')}${data.queues.map((queue) => option(queue, queue, form.queue ?? ''))}
          </select></label
        >
        <label
          >State<select name="state">
            ${option('', 'any', form.state ?? '')}${JOB_STATES.map((state) => option(state, state, form.state ?? ''))}
          </select></label
        >
        <label>Name<input name="name" size="14" value="${form.name ?? ''}" /></label>
        <label>Unique key<input name="uniqueKey" size="14" value="${form.uniqueKey ?? ''}" /></label>
        <label
          >Enqueued<select name="within">
            ${option('', 'any time', form.within ?? '')}${Object.keys(CREATED_WITHIN).map((within) => option(within, `last ${within}`, form.within ?? ''))}
          </select></label
        >
        ${
          data.payloadSearch
            ? html`<label
                >Payload contains<input
                  name="payload"
                  size="18"
                  placeholder='{"user":{"id":7}}'
                  value="${form.payload ?? ''}"
              /></label>`
            : ''
        }
        <button type="submit" class="primary">Filter</button>
      </form>
      <form class="filters" method="get" action="${page.base}/jobs" role="search">
        <label>Job id<input name="id" inputmode="numeric" size="12" /></label>
        <button type="submit">Open</button>
      </form>
    </div>
    <form method="post" action="${page.base}/api/jobs/bulk" class="panel" data-confirm="Apply this action?">
      ${csrfField(page)}<input type="hidden" name="_return" value="${page.here}" />
      ${Object.entries(filterQuery).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`)}
      ${
        page.readOnly
          ? ''
          : html`<div class="actions">
              <select name="action" aria-label="Action">
                ${Object.entries(JOB_ACTIONS).map(([value, { label }]) => html`<option value="${value}">${label}</option>`)}
              </select>
              <label>Priority<input name="priority" type="number" step="1" size="5" value="0" /></label>
              <button type="submit" name="scope" value="selected">Apply to selected</button>
              <button type="submit" name="scope" value="all" class="danger">Apply to all matching</button>
            </div>`
      }
      ${
        result.jobs.length === 0
          ? html`<p class="muted">
              ${result.nextCursor === null ? 'No job matches.' : 'No job matches on this stretch of the table; the next page goes on looking.'}
            </p>`
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
                  <th>Enqueued</th>
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
                      <td>${when(job.createdAt)}</td>
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
      ${cursor === null ? '' : html`<a href="${page.base}/jobs?${query({})}">« First page</a>`}
      ${result.nextCursor === null ? '' : html`<a rel="next" href="${page.base}/jobs?${query({ cursor: result.nextCursor })}">Next page »</a>`}
    </div>`
}

/** The bulk operations on "all matching" this dashboard ran lately, with their progress. */
function operationsView(page: PageContext, operations: readonly Operation[]): Html | string {
  if (operations.length === 0) return ''
  return html`<div class="panel operations">
    <table>
      <thead>
        <tr>
          <th>Bulk action</th>
          <th>Status</th>
          <th class="num">Matched</th>
          <th class="num">Changed</th>
          <th class="num">Skipped</th>
          <th>Started</th>
          <th></th>
        </tr>
      </thead>
      <tbody>
        ${operations.map(
          (operation) =>
            html`<tr data-operation="${operation.id}">
              <td class="wrap">${operation.title}</td>
              <td>${operation.status}${operation.error === null ? '' : html`: ${operation.error}`}</td>
              <td class="num">${count(operation.progress.matched)}</td>
              <td class="num">${count(operation.progress.changed)}</td>
              <td class="num">${count(operation.progress.skipped)}</td>
              <td>${when(operation.startedAt)}</td>
              <td>
                ${operation.status === 'running' ? actionButton(page, `/api/operations/${operation.id}/stop`, 'Stop') : ''}
              </td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`
}

export function jobView(page: PageContext, job: Job): Html {
  const path = `/api/jobs/${job.id}`
  const unstarted = job.state === 'scheduled' || job.state === 'ready'
  const finished = job.state === 'completed' || job.state === 'dead'
  return html`<h1>Job ${job.id} ${stateBadge(job.state)}</h1>
    <span data-refresh-next="${finished ? 0 : 1000}"></span>
    ${
      page.readOnly
        ? ''
        : html`<div class="actions panel">
            ${job.state === 'dead' ? actionButton(page, `${path}/retry`, 'Retry') : ''}
            ${job.state === 'scheduled' ? actionButton(page, `${path}/run-now`, 'Run now') : ''}
            ${finished ? '' : actionButton(page, `${path}/cancel`, 'Cancel', { danger: true, confirm: `Cancel job ${job.id}?` })}
            ${
              job.state === 'active'
                ? ''
                : actionButton(page, `${path}/delete`, 'Delete', {
                    danger: true,
                    confirm: `Delete job ${job.id}? It cannot be undone.`,
                    returnTo: `${page.base}/jobs?${new URLSearchParams({ queue: job.queue })}`,
                  })
            }
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
