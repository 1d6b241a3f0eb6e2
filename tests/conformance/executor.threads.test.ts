import { createExecutor } from '../../src/worker/executors/create-executor.js'
import { isolatingTestOptions, runExecutorConformance } from './executor.case.js'

// Threads share the worker's process: what kills a process kills the worker with its threads.
const SKIP = [
  {
    tests: ['fails a job whose handler SIGKILLs its own process as a crash with signal SIGKILL'],
    reason: "process.kill(process.pid) in a thread signals the worker's own process: SIGKILL ends it",
  },
  {
    tests: ['kills the processes a handler started when its attempt is aborted, and runs the next job'],
    reason:
      "a thread's processes are children of the worker, in its process group: terminating the thread leaves them",
  },
]

runExecutorConformance({
  name: 'threads',
  createExecutor: (handlersModulePath) =>
    createExecutor('threads', handlersModulePath, isolatingTestOptions()),
  skip: SKIP,
  testFile: import.meta.url,
})
