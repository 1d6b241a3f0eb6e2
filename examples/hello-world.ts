import { createClient, defineJobs, openStore, Worker } from 'ferry'

// Handlers: job names mapped to functions. Their types tell the client what each payload must be.
const jobs = defineJobs({
  'send-email': async ({ to }: { to: string }) => {
    console.log(`sending a welcome e-mail to ${to}`)
    return { sent: true }
  },
})

const store = await openStore(process.env.FERRY_STORE ?? 'sqlite:./ferry.db')
const client = createClient<typeof jobs>({ store })

// An enqueue resolves once its job is committed to disk: a crash after that loses nothing.
const { id } = await client.enqueue('send-email', { to: 'ada@example.com' }, { queue: 'hello', priority: 10 })

// A worker claims jobs from its queues in order, runs their handlers and stores each outcome.
const worker = new Worker({ store, handlers: jobs, queues: ['hello'] })
worker.on('job:completed', (job) => {
  if (job.id === id) void worker.stop()
})
await worker.start()
await worker.stopped

const { state, attempts, result } = (await store.listJobs({ ids: [id] })).jobs[0]!
console.log(`job ${id}: ${state} after ${attempts} attempt(s), result ${JSON.stringify(result)}`)
await store.close()
