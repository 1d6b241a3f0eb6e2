// The entry point of a child process of the `processes` and `fork` strategies.
import { runChild } from './child-runtime.js'

if (process.send === undefined) {
  console.error('ferry: this is the child entry of the processes executor; it needs an IPC channel')
  process.exit(1)
}

// Only the worker decides when its child dies (pool/spawn-process.ts starts it in a process group of its
// own, so a terminal's Ctrl-C does not reach it). systemd's default stop signals every process of
// the service with SIGTERM, and a signal that killed the child would end its running job, using up
// the attempt, while the worker lets running jobs finish. So both are ignored (an empty listener:
// it keeps nothing alive); the worker's own kill is SIGKILL, after the abort message and its grace
// period.
const ignoreSignal = (): void => {}
process.on('SIGINT', ignoreSignal)
process.on('SIGTERM', ignoreSignal)

// The worker closes the channel only by exiting (or dying): the child asks to disconnect itself when
// told to exit. A channel that closes otherwise means nobody is left to send outcomes to or to kill
// this child: it ends itself and everything its handlers started, its whole process group (a child
// whose loop a handler blocks cannot get here; the parent-death signal covers it, pool/spawn-process.ts).
let leaving = false
process.on('disconnect', () => {
  if (leaving) return
  try {
    process.kill(-process.pid, 'SIGKILL')
  } catch {
    // Not the leader of a group of its own (started some other way): itself alone.
    process.kill(process.pid, 'SIGKILL')
  }
})

// Disconnecting while a message is still being written crashes the child ("Cannot set
// properties of null (setting 'Symbol(kPendingMessages)')", Node 20): close() waits for the
// last send to leave.
let sending = 0
let closeWhenSent = false

// Deferred a turn: disconnecting inside the 'message' listener that asked for it crashes the
// child the same way.
const disconnect = (): void => {
  leaving = true
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
