import { Worker } from 'node:worker_threads'
import type { ChildMessage } from '../child/protocol.js'
import type { ChildEvents, ChildHandle, ChildSpawner } from './child-handle.js'
import { forEachLine } from './for-each-line.js'
import type { PoolSettings } from './pool-options.js'

/**
 * Starts the children of the threads strategy: worker threads on the child entry
 * (child/thread-entry.ts), with `resourceLimits` when there is a heap limit.
 */
export function threadSpawner({ heapLimitMb }: PoolSettings): ChildSpawner {
  return (events) => spawnThread(heapLimitMb, events)
}

function spawnThread(heapLimitMb: number | null, events: ChildEvents): ChildHandle {
  const worker = new Worker(threadEntry(), {
    stdout: true,
    stderr: true,
    // The worker's node flags (--test, --inspect…) are not the thread's business; the entry
    // brings its own TypeScript loader when it needs one.
    execArgv: [],
    ...(heapLimitMb !== null && { resourceLimits: { maxOldGenerationSizeMb: heapLimitMb } }),
  })
  let outOfMemory = false
  let errorText: string | undefined
  let terminated = false
  forEachLine(worker.stdout, (line) => events.line('stdout', line))
  forEachLine(worker.stderr, (line) => events.line('stderr', line))
  worker.on('message', (message) => events.message(message as ChildMessage))
  worker.on('error', (error) => {
    if ((error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') outOfMemory = true
    else errorText = error instanceof Error ? (error.stack ?? String(error)) : String(error)
  })
  worker.on('exit', (exitCode) => {
    events.exit({
      exitCode,
      signal: null,
      outOfMemory,
      terminated,
      ...(errorText !== undefined && { errorText }),
    })
  })
  return {
    label: String(worker.threadId),
    send: (message) => worker.postMessage(message),
    kill: () => {
      terminated = true
      void worker.terminate()
    },
  }
}

/**
 * The compiled entry beside this file. From the TypeScript sources (tests under tsx) it is a .ts
 * file, and on Node 20 a worker thread does not inherit the `--import tsx` loader for its entry:
 * a small ESM bootstrap registers tsx in the thread, then imports the entry.
 */
function threadEntry(): URL {
  const entry = new URL('../child/thread-entry.ts', import.meta.url)
  if (!import.meta.url.endsWith('.ts')) return new URL('../child/thread-entry.js', import.meta.url)
  const tsxApi = import.meta.resolve('tsx/esm/api')
  const bootstrap = `import { register } from ${JSON.stringify(tsxApi)}\nregister()\nawait import(${JSON.stringify(entry.href)})\n`
  return new URL(`data:text/javascript,${encodeURIComponent(bootstrap)}`)
}
