import { InlineExecutor } from '../../src/worker/executors/inline.js'
import { runExecutorConformance } from './executor.case.js'

// The inline strategy runs handlers on the worker's own event loop (src/worker/executors/inline.ts):
// what kills or freezes that loop kills or freezes the worker, and there is no child to kill.
const INLINE_CANNOT = [
  {
    tests: ['fails a job whose handler calls process.exit(3) as a crash with exit code 3'],
    reason: "process.exit in a handler exits the worker's own process",
  },
  {
    tests: ['survives ten crashing attempts in a row and still completes jobs'],
    reason: "process.exit in a handler exits the worker's own process",
  },
  {
    tests: ['fails a job whose handler SIGKILLs its own process as a crash with signal SIGKILL'],
    reason: "the handler's process is the worker's: SIGKILL ends both",
  },
  {
    tests: ['reports aborted for a handler that blocks its event loop, kills it and runs the next job'],
    reason: "a handler that blocks the loop blocks the worker's loop: no abort or timer can run",
  },
  {
    tests: ['fails a job whose handler runs out of memory as a crash that says so'],
    reason: "the handler's heap is the worker's: running out of memory aborts the worker",
  },
  {
    tests: ['kills the processes a handler started when its attempt is aborted, and runs the next job'],
    reason: "a handler's processes are children of the worker, in its process group: nothing can kill them",
  },
  {
    tests: ['keeps the last lines the handler wrote to stderr with its failure'],
    reason: "the handler writes to the worker's own stderr, which inline does not capture",
  },
]

runExecutorConformance({
  name: 'inline',
  createExecutor: (handlersModulePath) => new InlineExecutor(handlersModulePath),
  skip: INLINE_CANNOT,
  testFile: import.meta.url,
})
