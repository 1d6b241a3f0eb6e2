import { Writable } from 'node:stream'

import { createExecutor } from '../../src/worker/executors/create-executor.js'
import { runExecutorConformance } from './executor.case.js'

// Threads share the worker's process: what kills a process kills the worker with its threads.
const SKIP = [
  {
    tests: ['fails a job whose handler SIGKILLs its own process as a crash with signal SIGKILL'],
    reason: "process.kill(process.pid) in a thread signals the worker's own process: SIGKILL ends it",
  },
]

/** Children's output, prefixed by the executor, would only clutter the test report. */
const discard = (): Writable => new Writable({ write: (_chunk, _encoding, done) => done() })

runExecutorConformance({
  name: 'threads',
  createExecutor: (handlersModulePath) =>
    createExecutor('threads', handlersModulePath, {
      size: 2,
      // Short, so an abandoned attempt is killed quickly; a 128 MB heap runs out of memory fast.
      killGraceMs: 300,
      maxHeapMb: 128,
      stdout: discard(),
      stderr: discard(),
    }),
  skip: SKIP,
  testFile: import.meta.url,
})
