/**
 * What the driver (run.ts), the measuring child (child.ts) and the adapters share: the names of
 * the stores, products and scenarios, where one measurement runs, and the adapters' interface.
 */

export const STORES = ['sqlite', 'postgres', 'redis'] as const
export type StoreKind = (typeof STORES)[number]

/** In the order the tables list them: Ferry, the floor, then the peers. */
export const PRODUCTS = ['ferry', 'floor', 'plainjob', 'graphile-worker', 'pg-boss', 'bullmq'] as const
export type ProductName = (typeof PRODUCTS)[number]

/** Which store each product runs on here. */
export const PRODUCT_STORES: Record<ProductName, readonly StoreKind[]> = {
  ferry: STORES,
  floor: STORES,
  plainjob: ['sqlite'],
  'graphile-worker': ['postgres'],
  'pg-boss': ['postgres'],
  bullmq: ['redis'],
}

/** Neither Ferry nor the floor: a peer, for the "× best peer" column. */
export function isPeer(product: ProductName): boolean {
  return product !== 'ferry' && product !== 'floor'
}

/** A row of its own for a product in a scenario: another setting beside its defaults. */
export interface Variant {
  id: string
  /** Shown after the product's name, e.g. "prefetch 10". */
  label: string
}

export const FERRY_PREFETCH: Variant = { id: 'prefetch10', label: 'prefetch 10' }
export const PG_BOSS_FAST_POLL: Variant = { id: 'poll500ms', label: 'polling 0.5 s (its minimum)' }

/** The rows beside each product's defaults, by scenario. */
export function variantsOf(product: ProductName, scenario: ScenarioName): readonly Variant[] {
  if (product === 'ferry' && scenario === 'process-c10') return [FERRY_PREFETCH]
  if (
    product === 'pg-boss' &&
    (scenario === 'process-c1' || scenario === 'process-c10' || scenario === 'idle')
  )
    return [PG_BOSS_FAST_POLL]
  return []
}

export const SCENARIO_NAMES = [
  'serial-enqueue',
  'bulk-enqueue',
  'concurrent-enqueue',
  'process-c1',
  'process-c10',
  'startup',
  'idle',
] as const
export type ScenarioName = (typeof SCENARIO_NAMES)[number]

/** Where one measurement runs: made fresh by the driver for each measurement, removed after. */
export type Target =
  | { store: 'sqlite'; path: string }
  | { store: 'postgres'; url: string }
  | { store: 'redis'; url: string; host: string; port: number }

/** The job every scenario enqueues and runs: its handler does nothing. */
export const JOB_NAME = 'bench-noop'
/** The queue, for the products that name one. */
export const QUEUE_NAME = 'bench'

/** What the measuring code learns from a running worker. */
export interface WorkerHooks {
  /** Called as each job's handler starts. */
  onStart(): void
  /** Called when the product reports a job completed (see Adapter.completion). */
  onCompleted(): void
}

export interface RunningWorker {
  stop(): Promise<void>
}

export interface CompletedCounter {
  /** How many of the `enqueued` jobs the store holds completed. */
  count(enqueued: number): Promise<number>
  close(): Promise<void>
}

export interface Producer {
  /** One durable enqueue of a no-op job with payload { seq }. */
  enqueueOne(seq: number): Promise<void>
  /** `count` jobs (seq first … first + count - 1) through the product's bulk path, in one call. */
  enqueueBulk(first: number, count: number): Promise<void>
  close(): Promise<void>
}

export interface WorkerOptions {
  concurrency: number
  /** '' for the defaults, else the id of one of the adapter's variants. */
  variant: string
  hooks: WorkerHooks
}

/**
 * One product on the stores it supports. Each method opens what it needs on `target` and the
 * caller closes what it returns; nothing is shared between calls.
 */
export interface Adapter {
  readonly product: ProductName
  /**
   * When hooks.onCompleted comes: 'durable', after the job's completion is committed; 'early',
   * before (the product settles in the background), so the store is asked (completedCounter);
   * 'none', never (the store is asked once every handler has started).
   */
  readonly completion: 'durable' | 'early' | 'none'
  /** Loads what the product needs for `store` (its store module, its driver) before any clock starts. */
  load?(store: StoreKind): Promise<void>
  /** Creates the product's schema or tables on `target` (untimed). */
  migrate(target: Target): Promise<void>
  producer(target: Target): Promise<Producer>
  /** Creates and starts a worker: the startup scenario times this call up to the first handler. */
  startWorker(target: Target, options: WorkerOptions): Promise<RunningWorker>
  /** For completion 'early' and 'none': a connection that asks the store how many jobs it holds completed. */
  completedCounter?(target: Target): Promise<CompletedCounter>
  /**
   * The longest a process scenario waits for the jobs, in seconds, when the product is known to be
   * slower than the default window allows (its rate is then done / window).
   */
  processWindowSeconds?(variant: string, quick: boolean): number | undefined
}

/** One measurement the driver asks a child process for. */
export interface MeasureRequest {
  phase: 'prepare' | 'measure'
  product: ProductName
  variant: string
  scenario: ScenarioName
  target: Target | null
  quick: boolean
}

export interface MeasureResult {
  /** Figure key → value, in the scenario's units. */
  figures: Record<string, number>
  /** Set when the window ran out before every job was done: the rate is done / window. */
  windowed?: Windowed
}

export interface Windowed {
  done: number
  size: number
  windowSeconds: number
}

/** How the child prints its result: the last line of its stdout that starts with this. */
export const RESULT_PREFIX = 'FERRY-PEERS-RESULT '
