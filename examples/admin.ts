import {
  createClient,
  defineJobs,
  getStats,
  listJobs,
  openStore,
  permanentFailure,
  retryJobs,
  Worker,
  type JobPage,
} from 'ferry'

const store = await openStore(process.env.FERRY_STORE ?? 'sqlite:./ferry.db')

// Something to look at: two e-mails on the queue 'mail', one of them to an address that cannot work.
const jobs = defineJobs({
  'send-email': async ({ to }: { to: string }) => {
    if (to.endsWith('.invalid')) permanentFailure(`no mail server for ${to}`)
    return { sent: true }
  },
})
const client = createClient<typeof jobs>({ store })
await client.enqueueMany([
  { name: 'send-email', payload: { to: 'ada@example.com' }, options: { queue: 'mail' } },
  { name: 'send-email', payload: { to: 'bob@example.invalid' }, options: { queue: 'mail' } },
])
const worker = new Worker({ store, handlers: jobs, queues: ['mail'] })
let finished = 0
const onFinished = (): void => {
  if (++finished === 2) void worker.stop()
}
worker.on('job:completed', onFinished)
worker.on('job:dead', onFinished)
await worker.start()
await worker.stopped

// Per queue: jobs waiting, running and finished (and, in `totals`, every queue together).
const { queues } = await getStats(store)
for (const q of queues) {
  console.log(`${q.queue}: ${q.ready} ready, ${q.active} active, ${q.completed} completed, ${q.dead} dead`)
}

// Every job of the queue 'mail', newest first, a page at a time.
let cursor: string | null = null
do {
  const page: JobPage = await listJobs(store, { queue: 'mail', limit: 100, cursor: cursor ?? undefined })
  for (const job of page.jobs) {
    console.log(`job ${job.id}: ${job.state}${job.lastError ? ` (${job.lastError.message})` : ''}`)
  }
  cursor = page.nextCursor
} while (cursor !== null)

// Run the dead ones again, with fresh attempts.
const { movedCount } = await retryJobs(store, { allDead: true, queue: 'mail' })
console.log(`${movedCount} dead job(s) moved back to ready`)
await store.close()
