/**
 * A job payload whose JSON text is exactly `bytes` bytes long (ASCII), different for every `seq` so
 * no two jobs carry identical rows: `{"seq":12,"pad":"xxxx…"}`.
 */
export function payloadOfBytes(bytes: number, seq: number): { seq: number; pad: string } {
  const overhead = JSON.stringify({ seq, pad: '' }).length
  if (bytes < overhead)
    throw new RangeError(`a payload needs at least ${overhead} bytes (asked for ${bytes})`)
  return { seq, pad: 'x'.repeat(bytes - overhead) }
}
