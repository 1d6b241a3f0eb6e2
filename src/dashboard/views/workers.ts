// Who is running: each worker's record from its last heartbeat, with the jobs it runs.
import { html } from 'hono/html'

import type { WorkersReport } from '../../admin/workers.js'
import { when } from './format.js'
import type { Html, PageContext } from './layout.js'

export function workersView(page: PageContext, report: WorkersReport): Html {
  return html`<h1>Workers</h1>
    <div class="panel">
      ${
        report.workers.length === 0
          ? html`<p class="muted">No worker is running (none sent a heartbeat lately).</p>`
          : html`<table class="workers">
              <thead>
                <tr>
                  <th>Host</th>
                  <th class="num">Pid</th>
                  <th>Queues</th>
                  <th class="num">Concurrency</th>
                  <th>Strategy</th>
                  <th class="num">Running</th>
                  <th>Jobs</th>
                  <th>Started</th>
                  <th>Last heartbeat</th>
                </tr>
              </thead>
              <tbody>
                ${report.workers.map(
                  (worker) =>
                    html`<tr data-worker="${worker.workerId}">
                      <td>${worker.host}</td>
                      <td class="num">${worker.pid}</td>
                      <td>${worker.queues.join(', ')}</td>
                      <td class="num">${worker.concurrency}</td>
                      <td>${worker.strategy}</td>
                      <td class="num">${worker.activeCount}</td>
                      <td class="wrap">
                        ${worker.jobs.map(
                          (job) =>
                            html`<a
                              href="${page.base}/jobs/${job.id}"
                              title="${job.queue} / ${job.name}, started ${new Date(job.startedAt).toISOString()}"
                              >${job.id}</a
                            > `,
                        )}${worker.activeCount > worker.jobs.length ? html`<span class="muted">and ${worker.activeCount - worker.jobs.length} more</span>` : ''}
                      </td>
                      <td>${when(worker.startedAt, report.at)}</td>
                      <td>${when(worker.heartbeatAt, report.at)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }
    </div>`
}
