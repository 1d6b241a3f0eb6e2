// The throughput chart: completed and failed jobs per minute as stacked bars, drawn as SVG on the
// server (no script, and nothing the CSP would have to allow).
import { html } from 'hono/html'

import type { ThroughputMinute } from '../../admin/workers.js'
import { count } from './format.js'
import type { Html } from './layout.js'

const WIDTH = 1000
const HEIGHT = 160
const LABEL_ROOM = 16

export function throughputChart(minutes: readonly ThroughputMinute[]): Html {
  const top = Math.max(1, ...minutes.map((m) => m.completed + m.failed))
  const bar = WIDTH / Math.max(1, minutes.length)
  const plot = HEIGHT - LABEL_ROOM
  const y = (n: number) => (n / top) * plot
  const time = (ms: number) => new Date(ms).toISOString().slice(11, 16)
  const totals = minutes.reduce(
    (sum, m) => ({ completed: sum.completed + m.completed, failed: sum.failed + m.failed }),
    {
      completed: 0,
      failed: 0,
    },
  )
  return html`<div class="chart" role="img" aria-label="Jobs completed and failed per minute">
    <svg viewBox="0 0 ${WIDTH} ${HEIGHT}" preserveAspectRatio="none">
      <line class="axis" x1="0" y1="${plot}" x2="${WIDTH}" y2="${plot}" />
      ${minutes.map((m, i) => {
        const done = y(m.completed)
        const failed = y(m.failed)
        const x = (i * bar).toFixed(2)
        const w = Math.max(bar - 1, 0.5).toFixed(2)
        return html`<g
          ><title>${time(m.minute)} UTC: ${count(m.completed)} completed, ${count(m.failed)} failed</title>${
            done > 0
              ? html`<rect
                  class="completed"
                  x="${x}"
                  y="${(plot - done).toFixed(2)}"
                  width="${w}"
                  height="${done.toFixed(2)}"
                />`
              : ''
          }${
            failed > 0
              ? html`<rect
                  class="failed"
                  x="${x}"
                  y="${(plot - done - failed).toFixed(2)}"
                  width="${w}"
                  height="${failed.toFixed(2)}"
                />`
              : ''
          }</g
        >`
      })}
      <text x="2" y="10">${count(top)} / min</text>
      ${
        minutes.length === 0
          ? ''
          : html`<text x="2" y="${HEIGHT - 3}">${time(minutes[0]!.minute)}</text
              ><text x="${WIDTH - 2}" y="${HEIGHT - 3}" text-anchor="end"
                >${time(minutes[minutes.length - 1]!.minute)} UTC</text
              >`
      }
    </svg>
    <div class="legend">
      <span class="completed">${count(totals.completed)} completed</span
      ><span class="failed">${count(totals.failed)} failed attempts</span>
    </div>
  </div>`
}
