import { createClient, defineJobs, openStore } from 'ferry'

// Handlers: job names mapped to functions. Their types tell the client what each payload must be.
const jobs = defineJobs({
  'send-email': async ({ to }: { to: string }) => console.log(`Welcome aboard, ${to}!`),
})
export default jobs

const store = await openStore(process.env.FERRY_STORE ?? 'sqlite:./ferry.db')
const client = createClient<typeof jobs>({ store })

// An enqueue resolves once its job is committed to disk: a crash after that loses nothing.
const urgent = await client.enqueue('send-email', { to: 'ada@example.com' }, { priority: 10, delayMs: 5000 })
const plain = await client.enqueue('send-email', { to: 'grace@example.com' })

// The worker that runs handlers comes in a later release: for now, read back what the store kept.
for (const { id } of [urgent, plain]) {
  const { state, priority, runAt } = (await store.getJob(id))!
  console.log(`job ${id}: ${state}, priority ${priority}, runs at ${new Date(runAt).toISOString()}`)
}

await client.close()
await store.close()
