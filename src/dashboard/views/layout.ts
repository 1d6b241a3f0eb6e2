// The frame of every page: the navigation, the sign-out button, the notice of the last action, and
// the live reload (dashboard.js) for pages that ask for it.
import { html } from 'hono/html'
import type { HtmlEscapedString } from 'hono/utils/html'

import { assets } from '../generated/assets.js'

export type Html = HtmlEscapedString | Promise<HtmlEscapedString>

/** What every view needs to know about the request it answers. */
export interface PageContext {
  /** Where the dashboard is mounted: '' at the root, else a path such as '/ferry'. */
  base: string
  readOnly: boolean
  /** The CSRF token forms send back; null for a caller that needs none. */
  csrf: string | null
  /** Whether there is a session to sign out of. */
  signedIn: boolean
  /** The path and query of this page, for forms that come back to it. */
  here: string
  /** A message after an action (from the redirect's query). */
  notice: { text: string; error: boolean } | null
}

const NAV = [
  ['/', 'Overview'],
  ['/jobs', 'Jobs'],
  ['/workers', 'Workers'],
  ['/schedules', 'Schedules'],
] as const

export interface PageOptions {
  title: string
  /** The nav entry this page belongs to. */
  section: (typeof NAV)[number][0] | null
  /** Reload the content this often (ms) while the page is open and visible; 0: never. */
  refreshMs?: number
}

export function asset(page: PageContext, file: string): string {
  return `${page.base}/assets/${file}?v=${assets[file]!.hash}`
}

/** The whole document, or only <main>'s content for a live reload (fragment). */
export function layout(page: PageContext, options: PageOptions, content: Html, fragment: boolean): Html {
  const body = html`${
    page.notice === null
      ? ''
      : html`<div class="notice${page.notice.error ? ' error' : ''}" role="status">${page.notice.text}</div>`
  }${content}`
  if (fragment) return body
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · Ferry</title>
<link rel="stylesheet" href="${asset(page, 'dashboard.css')}">
<script src="${asset(page, 'dashboard.js')}" defer></script>
</head>
<body>
<header class="top">
<a class="brand" href="${page.base}/">Ferry</a>
<nav>${NAV.map(
    ([path, name]) =>
      html`<a
        href="${page.base}${path}"
        ${options.section === path ? html` class="here" aria-current="page"` : ''}
        >${name}</a
      >`,
  )}</nav>
${page.readOnly ? html`<span class="badge">read-only</span>` : ''}
${page.signedIn ? html`<form class="inline" method="post" action="${page.base}/logout">${csrfField(page)}<button type="submit">Sign out</button></form>` : ''}
</header>
<main${options.refreshMs ? html` data-refresh="${options.refreshMs}"` : ''}>${body}</main>
</body>
</html>`
}

export function csrfField(page: PageContext): Html | string {
  return page.csrf === null ? '' : html`<input type="hidden" name="_csrf" value="${page.csrf}" />`
}

/**
 * A button that posts an action to the JSON API as a form, and comes back to this page. Not shown
 * at all on a read-only dashboard.
 */
export function actionButton(
  page: PageContext,
  action: string,
  label: string,
  options: { confirm?: string; danger?: boolean; fields?: Record<string, string>; returnTo?: string } = {},
): Html | string {
  if (page.readOnly) return ''
  return html`<form
    class="inline"
    method="post"
    action="${page.base}${action}"
    ${options.confirm === undefined ? '' : html` data-confirm="${options.confirm}"`}
  >
    ${csrfField(page)}<input
      type="hidden"
      name="_return"
      value="${options.returnTo ?? page.here}"
    />${Object.entries(options.fields ?? {}).map(
      ([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`,
    )}<button type="submit" ${options.danger === true ? html` class="danger"` : ''}>${label}</button>
  </form>`
}

export function stateBadge(state: string): Html {
  return html`<span class="state state-${state}">${state}</span>`
}
