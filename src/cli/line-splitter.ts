// Cuts a byte stream into lines for `ferry enqueue --stdin`, in time linear in the input and
// memory bounded by the longest line it may keep, however long the lines that arrive.

const NEWLINE = 0x0a

export interface LineSplitterOptions {
  /** Longest line kept, in bytes, its newline not counted; the rest of a longer one is dropped unread. */
  maxLineBytes: number
  /** A complete line (1-based number, text decoded from UTF-8, without its `\n` or a `\r` before it). */
  onLine: (lineNumber: number, line: string, byteLength: number) => void
  /** Called once for a line as soon as it passes maxLineBytes; it gets no onLine. */
  onTooLong: (lineNumber: number) => void
}

/**
 * Feed it chunks with push() and call end() after the last one. A line's bytes are kept as the
 * pieces they came in and joined once, at its newline: joining the pending text to every chunk
 * instead (`(partial + chunk).split('\n')`) copies a long line again for each chunk, which made a
 * 100 MB line take 150 s. Newlines are found in the bytes, which is safe in UTF-8 (0x0a never
 * occurs inside a multi-byte character), and a line is decoded whole, so a character split
 * between two chunks is decoded right.
 */
export class LineSplitter {
  private readonly options: LineSplitterOptions
  /** The current line's bytes so far, as they arrived. */
  private pieces: Buffer[] = []
  private pieceBytes = 0
  /** The current line was reported too long: its bytes are dropped up to its newline. */
  private skipping = false
  /** Lines finished so far: the current one is number lineNumber + 1. */
  private lineNumber = 0

  constructor(options: LineSplitterOptions) {
    this.options = options
  }

  push(chunk: Buffer): void {
    let start = 0
    while (start <= chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start)
      const end = newline === -1 ? chunk.length : newline
      if (end > start) this.append(chunk.subarray(start, end))
      if (newline === -1) return
      this.finishLine()
      start = newline + 1
    }
  }

  /** The input ended: a last line without a newline still counts. */
  end(): void {
    if (this.pieceBytes > 0 || this.skipping) this.finishLine()
  }

  private append(bytes: Buffer): void {
    if (this.skipping) return
    if (this.pieceBytes + bytes.length > this.options.maxLineBytes) {
      this.pieces = []
      this.pieceBytes = 0
      this.skipping = true
      this.options.onTooLong(this.lineNumber + 1)
      return
    }
    this.pieces.push(bytes)
    this.pieceBytes += bytes.length
  }

  private finishLine(): void {
    this.lineNumber++
    if (this.skipping) {
      this.skipping = false
      return
    }
    const bytes = this.pieces.length === 1 ? this.pieces[0]! : Buffer.concat(this.pieces, this.pieceBytes)
    const byteLength = this.pieceBytes
    this.pieces = []
    this.pieceBytes = 0
    const text = bytes.toString('utf8')
    this.options.onLine(this.lineNumber, text.endsWith('\r') ? text.slice(0, -1) : text, byteLength)
  }
}
