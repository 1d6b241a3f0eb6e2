// The reporter of `npm test`: node:test's own spec reporter (one line per test, the failures again
// in full at the end) with the run's summary moved after those failures, in the `# tests N`,
// `# pass N`, `# fail N` form of node's TAP reporter, so that the closing lines of a run are its
// counts, as CI reads them. Raw TAP was 5,000 lines in which a failure was hard to find; for it,
// run `node --import tsx --test --test-reporter=tap <files…>`.
import { finished } from 'node:stream/promises'
import { spec } from 'node:test/reporters'

// The runner's closing diagnostics (nesting 0): `tests 924`, `pass 920`, `duration_ms 611234.5`, …
const SUMMARY = /^(tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) \d+(\.\d+)?$/

export default async function* readableWithSummary(source) {
  let summary = []
  const readable = new spec()
  const chunks = []
  readable.on('data', (chunk) => chunks.push(chunk))
  for await (const event of source) {
    if (event.type === 'test:diagnostic' && event.data.nesting === 0 && SUMMARY.test(event.data.message)) {
      // A set starts with `tests N`; only the last set, the whole run's, is printed.
      if (event.data.message.startsWith('tests ')) summary = []
      summary.push(`# ${event.data.message}\n`)
    } else {
      readable.write(event)
    }
    yield* chunks.splice(0)
  }
  // The spec reporter lists the failures when its input ends.
  readable.end()
  await finished(readable)
  yield* chunks.splice(0)
  yield* summary
}
