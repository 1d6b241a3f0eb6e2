import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { ClaimedJob } from '../core/job.js'
import { JobReports } from './job-reports.js'

const job = { id: '7', logs: ['from the last attempt'] } as ClaimedJob

test('only the latest progress and the whole log tail ride on the next renewal, once', () => {
  let reported = 0
  const reports = new JobReports(() => reported++)
  const reporter = reports.reporterFor(job, () => true)
  assert.equal(reports.forRenewal('7'), undefined, 'nothing to send before a report')
  reporter.progress('1')
  reporter.progress('2')
  reporter.log('line')
  assert.equal(reported, 3, 'each report asks for a renewal')
  assert.deepEqual(reports.forRenewal('7'), { progress: '2', logs: ['from the last attempt', 'line'] })
  reports.renewed('7')
  assert.equal(reports.forRenewal('7'), undefined, 'written: nothing more to send')
  assert.equal(reports.forSettlement('7'), undefined)
})

test('a report made while a renewal was on its way is sent again, with what it carried', () => {
  const reports = new JobReports(() => {})
  const reporter = reports.reporterFor(job, () => true)
  reporter.progress('1')
  assert.deepEqual(reports.forRenewal('7'), { progress: '1' })
  reporter.log('later')
  reports.renewed('7')
  assert.deepEqual(reports.forSettlement('7'), {
    progress: '1',
    logs: ['from the last attempt', 'later'],
  })
  assert.equal(reports.forSettlement('7'), undefined, 'the settlement took it all')
})

test('drops the reports of an attempt that no longer runs, and of a job whose lease was lost', () => {
  const reports = new JobReports(() => {})
  let running = true
  const reporter = reports.reporterFor(job, () => running)
  reporter.progress('1')
  reports.forget('7')
  assert.equal(reports.forRenewal('7'), undefined)
  running = false
  reporter.progress('2')
  assert.equal(reports.forSettlement('7'), undefined)
})
