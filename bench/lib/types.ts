/** One number a scenario measured in one run. */
export interface Figure {
  /** Stable within a scenario: runs are matched on it to take the median. */
  key: string
  label: string
  value: number
  unit: Unit
  /**
   * A count or a share that is honestly 0 at times (no sequential scan, no backlog, an idle thread
   * that never woke in a quick run): tests/bench.test.ts then accepts 0, where any other figure
   * must be positive.
   */
  mayBeZero?: boolean
  /**
   * A difference of two measurements (a strategy's cost minus inline's): at a tiny size, noise can
   * make it negative, and the table shows it as it was measured.
   */
  mayBeNegative?: boolean
}

export type Unit = 's' | 'ms' | '/s' | 'B/job' | 'MiB' | '×' | '%'

/** A design target for a figure at the scenario's full size (quick sizes are not judged). */
export interface Target {
  op: '<' | '<=' | '>='
  value: number
}

/** The stores a scenario can measure; each has its description line in a RESULTS.md section. */
export type BenchStoreKind = 'sqlite' | 'postgres' | 'redis'

/** What a scenario module hands the runner. */
export interface ScenarioDef {
  name: string
  /** The store it measures, named in the section's Store line. Default 'sqlite'. */
  store?: BenchStoreKind
  /** One line for the table's notes and --help. */
  summary: string
  /** The size the scenario's target is stated for, and the size `--quick` uses. */
  fullSize: number
  quickSize: number
  run: (size: number) => Promise<Figure[]>
  /** Targets by figure key. */
  targets: Readonly<Record<string, Target>>
}

export function storeOf(def: ScenarioDef): BenchStoreKind {
  return def.store ?? 'sqlite'
}
