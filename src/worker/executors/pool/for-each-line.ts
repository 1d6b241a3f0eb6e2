/** Splits a child's output stream into lines (the last one flushed when the stream ends). */
export function forEachLine(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  let pending = ''
  stream.setEncoding('utf8')
  stream.on('data', (chunk: string) => {
    const lines = (pending + chunk).split('\n')
    pending = lines.pop()!
    for (const line of lines) onLine(line.endsWith('\r') ? line.slice(0, -1) : line)
  })
  stream.on('end', () => {
    if (pending !== '') onLine(pending)
    pending = ''
  })
}
