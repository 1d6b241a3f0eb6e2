// How the dashboard writes times, numbers and JSON: compact for tables, exact in a title.
import { html } from 'hono/html'

/** An instant as "3 min ago" / "in 20 s", with the exact time in its title. */
export function when(at: number | null, now = Date.now()) {
  if (at === null) return html`<span class="muted">—</span>`
  const iso = new Date(at).toISOString()
  const delta = at - now
  const text = Math.abs(delta) < 1000 ? 'now' : delta < 0 ? `${span(-delta)} ago` : `in ${span(delta)}`
  return html`<time datetime="${iso}" title="${iso}">${text}</time>`
}

/** A length of time, in the largest unit that keeps it readable: 850 ms, 12 s, 4 min, 3 h, 2 d. */
export function span(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`
  if (ms < 86_400_000) return `${Math.round(ms / 3_600_000)} h`
  return `${Math.round(ms / 86_400_000)} d`
}

export function count(n: number): string {
  return n.toLocaleString('en-US')
}

/** A JSON value for a <pre>: indented; `html` escapes it, so a payload is never markup. */
export function json(value: unknown): string {
  if (value === undefined) return ''
  return JSON.stringify(value, null, 2) ?? ''
}
