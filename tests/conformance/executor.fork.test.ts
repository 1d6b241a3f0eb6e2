import { createExecutor } from '../../src/worker/executors/create-executor.js'
import { isolatingTestOptions, runExecutorConformance } from './executor.case.js'

// Every case runs: a child process isolates a crash, an exit, a blocked loop and running out of memory.
const SKIP: { tests: string[]; reason: string }[] = []

runExecutorConformance({
  name: 'fork',
  createExecutor: (handlersModulePath) => createExecutor('fork', handlersModulePath, isolatingTestOptions()),
  skip: SKIP,
  testFile: import.meta.url,
})
