// The entry point of a child process of the `processes` and `fork` strategies.
import { runChild } from './child-runtime.js'

if (process.send === undefined) {
  console.error('ferry: this is the child entry of the processes executor; it needs an IPC channel')
  process.exit(1)
}

// Disconnecting while a message is still being written crashes the child ("Cannot set
// properties of null (setting 'Symbol(kPendingMessages)')", Node 20): close() waits for the
// last send to leave.
let sending = 0
let closeWhenSent = false

// Deferred a turn: disconnecting inside the 'message' listener that asked for it crashes the
// child the same way.
const disconnect = (): void => {
  setImmediate(() => {
    if (process.connected) process.disconnect()
  })
}

runChild({
  send: (message, sent) => {
    // After a disconnect (the parent asked it to exit) there is nobody left to tell.
    if (!process.connected) return
    process.send!(message, undefined, {}, () => {
      if (--sending === 0 && closeWhenSent) disconnect()
      sent?.()
    })
    // Counted once the send is under way: a message that cannot be serialized throws first.
    sending++
  },
  onMessage: (listener) => process.on('message', listener),
  close: () => {
    if (sending === 0) disconnect()
    else closeWhenSent = true
  },
  memoryBytes: () => process.memoryUsage.rss(),
})
