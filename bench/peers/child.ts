/**
 * One measurement in a process of its own (run.ts starts it): one product, one scenario, one store,
 * on the fresh target the driver made. Loads only that product's adapter, runs the scenario's
 * set-up (phase 'prepare') or its measurement (phase 'measure', after the set-up unless the
 * scenario wants that apart), prints the result as the last line of stdout that starts with
 * RESULT_PREFIX, and exits without waiting for the product's stray timers.
 *
 *   node --import tsx bench/peers/child.ts '{"phase":"measure","product":"ferry",…}'
 */
import { loadAdapter } from './adapters/index.js'
import { idleFigures, scenarioNamed } from './lib/scenarios.js'
import { RESULT_PREFIX, type MeasureRequest, type MeasureResult } from './lib/types.js'

async function measure(request: MeasureRequest): Promise<MeasureResult> {
  const def = scenarioNamed(request.scenario)
  const size = request.quick ? def.size.quick : def.size.full
  // The idle floor is a bare Node process under the same runner: nothing loaded, nothing to do.
  if (request.product === 'floor' && request.scenario === 'idle') return idleFigures(size, request.quick)
  const { target } = request
  if (target === null) throw new Error(`${request.product} ${request.scenario} needs a store`)
  const adapter = await loadAdapter(request.product)
  await adapter.load?.(target.store)
  if (request.phase === 'prepare' || !def.prepareApart) await def.prepare(adapter, target, size)
  if (request.phase === 'prepare') return { figures: {} }
  return def.measure(adapter, target, size, { variant: request.variant, quick: request.quick })
}

const argument = process.argv[2]
if (argument === undefined) {
  process.stderr.write('usage: child.ts <request as JSON>\n')
  process.exit(2)
}
try {
  const result = await measure(JSON.parse(argument) as MeasureRequest)
  process.stdout.write(`\n${RESULT_PREFIX}${JSON.stringify(result)}\n`, () => process.exit(0))
} catch (error) {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`)
  process.exit(1)
}
