// The entry point of a worker thread of the `threads` strategy.
import { getHeapStatistics } from 'node:v8'
import { parentPort } from 'node:worker_threads'
import { runChild } from './child-runtime.js'

if (parentPort === null)
  throw new Error('ferry: this is the entry of the threads executor; run it as a worker thread')
const port = parentPort

runChild({
  // postMessage queues the message at once (or throws): it arrives even if the thread ends next.
  send: (message, sent) => {
    port.postMessage(message)
    sent?.()
  },
  onMessage: (listener) => port.on('message', listener),
  close: () => port.close(),
  // RSS belongs to the whole process; a thread's own footprint is its isolate's heap.
  memoryBytes: () => getHeapStatistics().used_heap_size,
})
