import { closeSync, fdatasyncSync, fsyncSync, openSync, rmSync, writeSync } from 'node:fs'
import { join } from 'node:path'

export type SyncCall = 'fdatasync' | 'fsync'

/**
 * The disk's raw durable-write rate: `count` times, append 4 KiB to a file in `dir` and sync it,
 * as a WAL commit appends its frames and syncs the WAL. Returns syncs per second.
 */
export function measureSyncRate(dir: string, count: number, call: SyncCall = 'fdatasync'): number {
  const path = join(dir, `sync-probe-${call}.bin`)
  const block = Buffer.alloc(4096, 0x5a)
  const fd = openSync(path, 'w')
  try {
    const sync = call === 'fsync' ? fsyncSync : fdatasyncSync
    const start = process.hrtime.bigint()
    for (let i = 0; i < count; i++) {
      writeSync(fd, block, 0, block.length, i * block.length)
      sync(fd)
    }
    const seconds = Number(process.hrtime.bigint() - start) / 1e9
    return count / seconds
  } finally {
    closeSync(fd)
    rmSync(path, { force: true })
  }
}
