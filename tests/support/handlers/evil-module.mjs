// A module no worker is configured with: if a job could make a worker load it, it would leave a
// marker file at $FERRY_EVIL_MARKER. The security test checks that no marker ever appears.
import { writeFileSync } from 'node:fs'

if (process.env.FERRY_EVIL_MARKER) writeFileSync(process.env.FERRY_EVIL_MARKER, String(process.pid))

export default {
  ok: () => 'evil',
  echo: () => 'evil',
}
