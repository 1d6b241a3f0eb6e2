/**
 * The dashboard in a real browser (Debian's Chromium through playwright-core), on every store: a
 * worker runs jobs while the test signs in, reads the overview, filters the job list, opens a job,
 * retries a dead job and watches it complete, pauses a queue and sees the worker leave its jobs,
 * and signs out. Each page is saved as a screenshot under test-results/dashboard/.
 */
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test, type TestContext } from 'node:test'

import { chromium, type BrowserContext, type Page } from 'playwright-core'

import { createClient, Worker, type JobId, type Store } from '../../src/index.js'
import { serveDashboard } from '../../src/dashboard/index.js'
import { within } from '../support/async.js'
import { REPO_ROOT } from '../support/processes.js'
import { skipUnlessAvailable } from '../support/services.js'
import { getExistingJob } from '../support/store-calls.js'
import { freshStore, STORES } from '../support/stores.js'

const CHROMIUM = '/usr/bin/chromium'
const TOKEN = 'browser-test-token-0123456789'
const SCREENSHOTS = join(REPO_ROOT, 'test-results', 'dashboard')

const browserMissing = skipUnlessAvailable(
  existsSync(CHROMIUM) ? null : `${CHROMIUM} is missing (apt-get install chromium)`,
)

/** A fresh Chromium profile for one test, closed and removed after it. */
async function openBrowser(t: TestContext): Promise<BrowserContext> {
  const profile = mkdtempSync(join(tmpdir(), 'ferry-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
    viewport: { width: 1280, height: 800 },
  })
  t.after(async () => {
    await context.close()
    rmSync(profile, { recursive: true, force: true })
  })
  return context
}

async function screenshot(page: Page, store: string, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true })
  await page.screenshot({ path: join(SCREENSHOTS, `${store}-${name}.png`), fullPage: true })
}

/** Polls the store until the job is in `state` (the worker runs in this process). */
async function jobReaches(store: Store, id: JobId, state: string, timeoutMs = 15_000): Promise<void> {
  await within(
    timeoutMs,
    () => `job ${id} becoming ${state}`,
    (async () => {
      while ((await getExistingJob(store, id)).state !== state) await new Promise((r) => setTimeout(r, 50))
    })(),
  )
}

for (const under of STORES) {
  describe(`the dashboard in Chromium on ${under.name}`, { skip: under.skip ?? browserMissing.skip }, () => {
    test('sign in, overview, filter, open a job, retry a dead job, pause a queue, sign out', async (t) => {
      const { store } = await freshStore(t, under)
      const client = createClient({ store })
      // `report` fails until the test mends it: its job ends dead, and a retry then completes.
      let reportsWork = false
      const worker = new Worker({
        store,
        queues: ['mail', 'reports'],
        concurrency: 2,
        scheduler: false,
        retention: false,
        handlers: {
          send: async () => ({ sent: true }),
          report: async () => {
            if (!reportsWork) throw new Error('template "q3" does not exist')
            return { pages: 12 }
          },
        },
      })
      await worker.start()
      t.after(() => worker.stop({ graceful: false }))
      for (let i = 0; i < 3; i++)
        await client.enqueue('send', { to: `user-${i}@example.com` }, { queue: 'mail' })
      const { id: report } = await client.enqueue(
        'report',
        { template: 'q3' },
        { queue: 'reports', maxAttempts: 1 },
      )
      await jobReaches(store, report, 'dead')

      const served = await serveDashboard({ store, port: 0, token: TOKEN })
      t.after(() => served.close())
      const context = await openBrowser(t)
      const page = await context.newPage()
      const errors: string[] = []
      page.on('pageerror', (error) => errors.push(error.message))
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text())
      })

      // Signing in: every page sends a stranger to the form; a wrong token is refused.
      await page.goto(served.url)
      assert.match(page.url(), /\/login$/)
      await screenshot(page, under.name, 'sign-in')
      await page.fill('input[name=token]', 'not-the-token')
      await page.click('button[type=submit]')
      await page.getByText('That token is not right.').waitFor()
      await page.fill('input[name=token]', TOKEN)
      await page.click('button[type=submit]')
      await page.locator('h1', { hasText: 'Overview' }).waitFor()
      errors.length = 0 // the wrong token's 401 was meant

      // The overview counts each queue's jobs.
      const reportsRow = page.locator('tr[data-queue=reports]')
      await reportsRow.waitFor()
      assert.equal(await reportsRow.locator('td').nth(5).innerText(), '1') // dead
      await page.locator('tr[data-queue=mail] td').nth(4).getByText('3').waitFor() // completed
      await page.locator('.chart svg').waitFor()
      await screenshot(page, under.name, 'overview')

      // Filtering the job list by queue and state.
      await page.click('nav >> text=Jobs')
      await page.selectOption('select[name=queue]', 'reports')
      await page.selectOption('select[name=state]', 'dead')
      await page.click('button:has-text("Filter")')
      await page.waitForURL(/queue=reports/)
      const rows = page.locator('table.jobs tbody tr')
      assert.equal(await rows.count(), 1)
      assert.equal(await rows.first().getAttribute('data-job'), report)
      await screenshot(page, under.name, 'jobs')

      // Opening the dead job: its payload and error are text, and Retry runs it again.
      await page.click(`table.jobs a:text-is("${report}")`)
      await page.locator('pre.payload', { hasText: '"template": "q3"' }).waitFor()
      await page.locator('pre.error', { hasText: 'template "q3" does not exist' }).waitFor()
      await screenshot(page, under.name, 'job-dead')
      reportsWork = true
      await page.click('button:has-text("Retry")')
      await page.getByText(`job ${report} retried`).waitFor()
      // The page follows the job by itself until it completes.
      await page.locator('h1 .state-completed').waitFor({ timeout: 15_000 })
      await page.locator('pre.result', { hasText: '"pages": 12' }).waitFor()
      await screenshot(page, under.name, 'job-completed')
      assert.equal((await getExistingJob(store, report)).state, 'completed')

      // Pausing a queue: the worker leaves its new jobs, until it is resumed.
      await page.click('nav >> text=Overview')
      await page.locator('tr[data-queue=mail] button:has-text("Pause")').click()
      await page.getByText('queue mail paused').waitFor()
      await page.locator('tr[data-queue=mail] .badge.paused').waitFor()
      await screenshot(page, under.name, 'overview-paused')
      const { id: held } = await client.enqueue('send', { to: 'late@example.com' }, { queue: 'mail' })
      await new Promise((resolve) => setTimeout(resolve, 1500))
      assert.equal((await getExistingJob(store, held)).state, 'ready')
      await page.locator('tr[data-queue=mail] button:has-text("Resume")').click()
      await page.getByText('queue mail resumed').waitFor()
      await jobReaches(store, held, 'completed')

      // The workers page lists this process's worker, from its heartbeat in the store.
      await page.click('nav >> text=Workers')
      const row = page.locator(`tr[data-worker="${worker.workerId}"]`)
      await row.waitFor()
      assert.equal(await row.locator('td').nth(1).innerText(), String(process.pid))
      assert.equal(await row.locator('td').nth(2).innerText(), 'mail, reports')
      await screenshot(page, under.name, 'workers')

      // The schedules and queue pages render.
      await page.click('nav >> text=Schedules')
      await page.locator('h1', { hasText: 'Schedules' }).waitFor()
      await page.goto(`${served.url}queues/mail`)
      await page.locator('h1', { hasText: 'Queue mail' }).waitFor()
      await screenshot(page, under.name, 'queue')

      // Signing out ends the session: the pages send the browser back to the form.
      await page.click('button:has-text("Sign out")')
      await page.waitForURL(/\/login$/)
      await page.goto(served.url)
      assert.match(page.url(), /\/login$/)
      assert.deepEqual(errors, [])
    })
  })
}
