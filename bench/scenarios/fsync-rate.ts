import { measureSyncRate } from '../lib/fsync.js'
import { withTempDir } from '../lib/temp.js'
import type { Figure, ScenarioDef } from '../lib/types.js'

/**
 * The disk's raw fsync rate, the ceiling for one-at-a-time durable commits: `size` times, append
 * 4 KiB to a file in the benchmark directory and sync it — with fsync (what SQLite's WAL commit
 * calls on this build, per strace) and with fdatasync (data, and the size when the file grows).
 */
export async function fsyncRate(size: number): Promise<Figure[]> {
  return withTempDir('fsync-rate', async (dir) => [
    {
      key: 'fsync_per_s',
      label: '4 KiB append + fsync',
      value: measureSyncRate(dir, size, 'fsync'),
      unit: '/s',
    },
    {
      key: 'fdatasync_per_s',
      label: '4 KiB append + fdatasync',
      value: measureSyncRate(dir, size, 'fdatasync'),
      unit: '/s',
    },
  ])
}

export const fsyncRateScenario: ScenarioDef = {
  name: 'fsync-rate',
  summary: "the disk's raw sync rate: 4 KiB append + fsync/fdatasync, one at a time",
  fullSize: 2_000,
  quickSize: 50,
  run: fsyncRate,
  targets: {},
}
