/**
 * Append-only ndjson histories, one file per process incarnation. A SIGKILL can tear at most the
 * line being written, so readers skip a last line that does not parse.
 */
import { closeSync, existsSync, openSync, readdirSync, readFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'

export class History {
  private fd: number | null

  constructor(path: string) {
    this.fd = openSync(path, 'a')
  }

  /** Written with one write(2) on an O_APPEND file: the line is in the file when this returns. */
  write(record: object): void {
    if (this.fd === null) return
    writeSync(this.fd, `${JSON.stringify(record)}\n`)
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd)
    this.fd = null
  }
}

/** Every record of one history; a torn last line (the process died while writing it) is skipped. */
export function readHistory<T>(path: string): T[] {
  if (!existsSync(path)) return []
  const lines = readFileSync(path, 'utf8').split('\n')
  const records: T[] = []
  lines.forEach((line, i) => {
    if (line === '') return
    try {
      records.push(JSON.parse(line) as T)
    } catch (error) {
      if (i < lines.length - 2)
        throw new Error(`${path}:${i + 1}: not JSON: ${(error as Error).message}`, { cause: error })
    }
  })
  return records
}

/** The history files in `dir` whose names start with `prefix`, sorted. */
export function historyFiles(dir: string, prefix: string): string[] {
  return readdirSync(dir)
    .filter((name) => name.startsWith(prefix) && name.endsWith('.ndjson'))
    .sort()
    .map((name) => join(dir, name))
}
