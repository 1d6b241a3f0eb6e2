/** Each product's adapter, loaded only when asked for: a child process loads one product alone. */
import type { Adapter, ProductName } from '../lib/types.js'

const MODULES: Record<ProductName, () => Promise<{ adapter: Adapter }>> = {
  ferry: () => import('./ferry.js'),
  floor: () => import('./floor.js'),
  plainjob: () => import('./plainjob.js'),
  'graphile-worker': () => import('./graphile-worker.js'),
  'pg-boss': () => import('./pg-boss.js'),
  bullmq: () => import('./bullmq.js'),
}

export async function loadAdapter(product: ProductName): Promise<Adapter> {
  return (await MODULES[product]()).adapter
}
