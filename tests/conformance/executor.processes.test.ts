import { Writable } from 'node:stream'

import { createExecutor } from '../../src/worker/executors/create-executor.js'
import { runExecutorConformance } from './executor.case.js'

// Every case runs: a child process isolates a crash, an exit, a blocked loop and running out of memory.
const SKIP: { tests: string[]; reason: string }[] = []

/** Children's output, prefixed by the executor, would only clutter the test report. */
const discard = (): Writable => new Writable({ write: (_chunk, _encoding, done) => done() })

runExecutorConformance({
  name: 'processes',
  createExecutor: (handlersModulePath) =>
    createExecutor('processes', handlersModulePath, {
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
