import { Registry } from 'prom-client'
import { createClient, defineJobs, openStore, registerFerryMetrics, serveMetrics, Worker } from 'ferry'

const store = await openStore(process.env.FERRY_STORE ?? 'sqlite:./ferry.db')

// Ferry's metrics in the application's registry; the gauges of jobs by state and of queue latency
// read this store's stats.
const registry = new Registry()
const metrics = registerFerryMetrics({ registry, store })

// The worker and the client get the instrumented store: their store calls are timed, new jobs counted.
const instrumented = metrics.instrumentStore(store)
const jobs = defineJobs({ 'resize-image': async ({ width }: { width: number }) => ({ width }) })
const worker = new Worker({ store: instrumented, handlers: jobs, queues: ['images'] })
metrics.observeWorker(worker)
const client = createClient<typeof jobs>({ store: instrumented })

// GET /metrics on 127.0.0.1 (port 0: any free one); an application with an HTTP server of its own
// serves `await registry.metrics()` there instead.
const server = await serveMetrics({ registry, port: 0 })

let completed = 0
worker.on('job:completed', (job) => {
  console.log(`job ${job.id}: completed`)
  if (++completed === 3) void worker.stop()
})
await worker.start()
await client.enqueueMany(
  [640, 1280, 1920].map((width) => ({
    name: 'resize-image',
    payload: { width },
    options: { queue: 'images' },
  })),
)
await worker.stopped

const exposition = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text()
for (const line of exposition.split('\n')) {
  if (
    line.startsWith('ferry_jobs_completed_total{') ||
    line.startsWith('ferry_jobs{queue="images",state="completed"}')
  )
    console.log(line)
}
await server.close()
metrics.close()
await store.close()
