/**
 * The PostgreSQL store's listening connection: LISTEN on the schema's channel (wake-ups, from
 * functions/wake.sql) and on the store's own delivery channel (functions/deliver.sql), and the
 * advisory lock that tells an enqueue this store's registered waiters are still there. It comes
 * back by itself after a drop or a server restart, with a new lock key each time.
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'

import { StoreClosedError } from '../../core/errors.js'
import type { Delivery } from '../kernel/delivery.js'
import { decodeDelivery } from './postgres-encoding.js'
import { postgresError } from './postgres-errors.js'
import { quoteIdent } from './postgres-migrations.js'

/** The listening connection comes back after a drop with this backoff (doubling, with jitter). */
const RECONNECT_MIN_MS = 100
const RECONNECT_MAX_MS = 5_000

/** What the listener hears, as the store acts on it. */
export interface ListenerEvents {
  /** Jobs became ready on these queues. */
  ready(queues: string[]): void
  /** A scheduled job is due at this time of the server's clock. */
  due(serverAt: number): void
  /** Anything may have changed (a stop request, notifications lost while reconnecting). */
  anything(): void
  delivery(delivery: Delivery): void
}

export class PostgresListener {
  /** The key of the advisory lock the connection holds, null while there is none. */
  lockKey: string | null = null
  private client: pg.Client | null = null
  private listening: Promise<void> | null = null
  private reconnectTimer: NodeJS.Timeout | null = null
  private reconnectAttempts = 0
  private closed = false

  constructor(
    private readonly config: pg.ClientConfig,
    /** The schema's channel, and this store's own for deliveries. */
    private readonly channel: string,
    readonly deliveryChannel: string,
    /** host:port, for the messages of connection errors. */
    private readonly server: string,
    private readonly events: ListenerEvents,
  ) {}

  get connected(): boolean {
    return this.client !== null
  }

  /** Resolves once LISTEN is active and the connection holds its lock, opening it if needed. */
  listen(): Promise<void> {
    if (this.closed) return Promise.reject(new StoreClosedError('waitForWork'))
    this.listening ??= this.open().catch((error: unknown) => {
      this.listening = null
      this.scheduleReconnect()
      throw error
    })
    return this.listening
  }

  /** Ends the connection, and so releases its lock: from then on no enqueue hands this store jobs. */
  async close(): Promise<void> {
    this.closed = true
    if (this.reconnectTimer !== null) clearTimeout(this.reconnectTimer)
    this.reconnectTimer = null
    const client = this.client
    this.client = null
    this.listening = null
    this.lockKey = null
    await client?.end().catch(() => {})
  }

  private async open(): Promise<void> {
    const client = new pg.Client(this.config)
    let connected = false
    // A drop (server restart, pg_terminate_backend, network) ends the connection: open a new one.
    const onLost = (): void => {
      if (this.client !== client) return
      this.client = null
      this.listening = null
      this.lockKey = null
      client.removeAllListeners('notification')
      client.end().catch(() => {})
      this.scheduleReconnect()
    }
    client.on('error', onLost)
    client.on('end', onLost)
    client.on('notification', (message) => {
      if (message.channel !== this.deliveryChannel) this.onWake(message.payload ?? '*')
      else {
        const delivery = decodeDelivery(message.payload ?? '')
        if (delivery !== null) this.events.delivery(delivery)
      }
    })
    let lockKey: string
    try {
      await client.connect()
      connected = true
      if (this.closed) throw new StoreClosedError('waitForWork')
      // One round trip. The lock is the liveness of this store's waiters: the server releases it
      // when the connection ends, however it ends. A key of its own for each connection: taking
      // the previous one again could wait for the server to notice that connection is gone.
      for (let locked = false; !locked;) {
        lockKey = randomBytes(8).readBigInt64BE().toString()
        const results = (await client.query(
          `LISTEN ${quoteIdent(this.channel)}; LISTEN ${quoteIdent(this.deliveryChannel)}; ` +
            `SELECT pg_try_advisory_lock(${lockKey}) AS locked`,
        )) as unknown as pg.QueryResult<{ locked: boolean }>[]
        // False only when another session holds that very key: draw another.
        locked = results[results.length - 1]!.rows[0]!.locked
      }
      if (this.closed) throw new StoreClosedError('waitForWork')
    } catch (error) {
      client.removeAllListeners('notification')
      if (connected) await client.end().catch(() => {})
      throw postgresError(error, this.server)
    }
    this.client = client
    this.lockKey = lockKey!
    this.reconnectAttempts = 0
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer !== null) return
    const attempt = this.reconnectAttempts++
    const delay = Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** attempt) * (0.5 + Math.random() / 2)
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null
      if (this.closed) return
      void this.listen().then(
        // Notifications sent while the connection was down are lost: every waiter looks again.
        () => this.events.anything(),
        () => {},
      )
    }, delay)
  }

  /** A wake-up (functions/wake.sql): '*', or queues made ready and `queue@runAt` for due times. */
  private onWake(message: string): void {
    if (message === '*') {
      this.events.anything()
      return
    }
    const ready: string[] = []
    for (const item of message.split(',')) {
      const at = item.indexOf('@')
      if (at < 0) ready.push(item)
      else this.events.due(Number(item.slice(at + 1)))
    }
    this.events.ready(ready)
  }
}
