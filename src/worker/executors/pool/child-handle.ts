/**
 * What the pool needs of one child, whatever runs it: a spawner (spawn-thread.ts,
 * spawn-process.ts) starts the child and reports its messages, output lines and exit.
 */
import type { ChildMessage, ParentMessage } from '../child/protocol.js'

/** How a child ended, as its spawner saw it. */
export interface ChildExit {
  exitCode: number | null
  signal: string | null
  /** The child died of V8's heap limit. */
  outOfMemory: boolean
  /** An uncaught error reported by a thread's 'error' event (its stack). */
  errorText?: string
  /** The pool terminated the thread (it has no signal to report). */
  terminated?: boolean
}

/** What a spawner reports about its child. `exit` comes once, after the child's output. */
export interface ChildEvents {
  message(message: ChildMessage): void
  line(stream: 'stdout' | 'stderr', line: string): void
  exit(exit: ChildExit): void
}

/** One child as the pool drives it. */
export interface ChildHandle {
  /** Names the child in output lines when no job runs in it: a pid or a thread id. */
  readonly label: string
  send(message: ParentMessage): void
  /**
   * Ends the child now: a process's whole process group (the child and what its handlers started)
   * gets SIGKILL, since the child ignores SIGTERM (spawn-process.ts says why); a thread is terminated.
   */
  kill(): void
}

/** Starts one child, which reports to `events`. */
export type ChildSpawner = (events: ChildEvents) => ChildHandle
