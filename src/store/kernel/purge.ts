/**
 * Purging, as every backend's purge() gets it from here: finished jobs deleted a bounded chunk at
 * a time, each chunk its own transaction, statement or script, so that a large purge never holds
 * the store (its write lock, its row locks, the Redis server) for long.
 */

export interface PurgedChunk {
  /** Jobs deleted by this chunk. */
  deleted: number
  /** Jobs it looked at (Redis may look at more than it deletes); default: those deleted. */
  looked?: number
}

/** Runs `purgeChunk` until a chunk looks at fewer than `chunkSize` jobs; returns how many went. */
export async function purgeInChunks(
  chunkSize: number,
  purgeChunk: (limit: number) => PurgedChunk | Promise<PurgedChunk>,
): Promise<number> {
  let total = 0
  for (;;) {
    const { deleted, looked = deleted } = await purgeChunk(chunkSize)
    total += deleted
    if (looked < chunkSize) return total
  }
}
