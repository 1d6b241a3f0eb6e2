/**
 * Who may use the dashboard, and which requests may change anything. The rules (docs/dashboard.md):
 * - With a token, every page and API call needs either `Authorization: Bearer <token>` (scripts)
 *   or the session cookie that signing in with the token gives (a browser). Without one, the
 *   dashboard is open to whoever reaches it, which serveDashboard allows only on a loopback address.
 * - A request that changes something must come from the dashboard's own pages: a cross-site one
 *   (Sec-Fetch-Site, Origin) is refused, and a browser's must carry its session's CSRF token. A
 *   bearer token needs none: a browser never sends it by itself.
 * - Read-only refuses every change.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

export const SESSION_COOKIE = 'ferry_session'
/** A signed-in browser stays signed in this long, unless it signs out or the dashboard restarts. */
export const SESSION_MS = 12 * 60 * 60 * 1000
/** Wrong tokens accepted at the sign-in form per minute, across all clients, before it answers 429. */
const SIGN_IN_FAILURES_PER_MINUTE = 10

export type Caller =
  /** A script with the bearer token: needs no CSRF token. */
  | { kind: 'bearer' }
  /** A browser signed in, or anyone when the dashboard has no token: needs `csrf` to change anything. */
  | { kind: 'browser'; csrf: string; sessionId: string | null }

interface Session {
  csrf: string
  expiresAt: number
}

export class Access {
  readonly tokenRequired: boolean
  private readonly tokenDigest: Buffer | null
  private readonly sessions = new Map<string, Session>()
  /** The CSRF token of a dashboard without a token: one for all, readable only by its own pages. */
  private readonly openCsrf = randomToken()
  private failures: number[] = []

  constructor(token: string | null) {
    this.tokenRequired = token !== null
    this.tokenDigest = token === null ? null : digest(token)
  }

  /** The caller a request speaks for, or null when it must sign in first. */
  callerOf(request: Request): Caller | null {
    if (this.tokenDigest === null) return { kind: 'browser', csrf: this.openCsrf, sessionId: null }
    const authorization = request.headers.get('authorization')
    if (authorization !== null) {
      const match = /^Bearer\s+(.+)$/i.exec(authorization)
      return match !== null && this.isToken(match[1]!.trim()) ? { kind: 'bearer' } : null
    }
    const sessionId = cookieOf(request, SESSION_COOKIE)
    if (sessionId === null) return null
    const session = this.sessions.get(sessionId)
    if (session === undefined) return null
    if (session.expiresAt <= Date.now()) {
      this.sessions.delete(sessionId)
      return null
    }
    return { kind: 'browser', csrf: session.csrf, sessionId }
  }

  /**
   * Checks a token typed at the sign-in form: a new session's id when it is right, 'wrong', or
   * 'too_many' once too many wrong ones came in the last minute (guessing is slowed for everyone).
   */
  signIn(token: string, now = Date.now()): string | 'wrong' | 'too_many' {
    this.failures = this.failures.filter((at) => at > now - 60_000)
    if (this.failures.length >= SIGN_IN_FAILURES_PER_MINUTE) return 'too_many'
    if (!this.isToken(token)) {
      this.failures.push(now)
      return 'wrong'
    }
    for (const [id, session] of this.sessions) if (session.expiresAt <= now) this.sessions.delete(id)
    const sessionId = randomToken()
    this.sessions.set(sessionId, { csrf: randomToken(), expiresAt: now + SESSION_MS })
    return sessionId
  }

  signOut(sessionId: string): void {
    this.sessions.delete(sessionId)
  }

  private isToken(candidate: string): boolean {
    return this.tokenDigest !== null && timingSafeEqual(digest(candidate), this.tokenDigest)
  }
}

/**
 * Why a request that changes something is refused as cross-site, or null when it is not: a browser
 * says where a request comes from in Sec-Fetch-Site (all current ones) or Origin; a request from
 * another site, or from a page of another origin on this one, is refused. A script sends neither.
 */
export function crossSiteReason(request: Request): string | null {
  const site = request.headers.get('sec-fetch-site')
  if (site !== null && site !== 'same-origin' && site !== 'none') return `Sec-Fetch-Site is ${site}`
  const origin = request.headers.get('origin')
  if (origin === null) return null
  const host = request.headers.get('host') ?? new URL(request.url).host
  let originHost: string
  try {
    originHost = new URL(origin).host
  } catch {
    return `Origin ${origin} is not a URL`
  }
  return originHost === host ? null : `Origin ${origin} is not this dashboard's`
}

/** Whether two tokens are equal, in constant time. */
export function sameToken(given: string | null | undefined, expected: string): boolean {
  return typeof given === 'string' && timingSafeEqual(digest(given), digest(expected))
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest()
}

function randomToken(): string {
  return randomBytes(32).toString('base64url')
}

function cookieOf(request: Request, name: string): string | null {
  const header = request.headers.get('cookie')
  if (header === null) return null
  for (const part of header.split(';')) {
    const index = part.indexOf('=')
    if (index !== -1 && part.slice(0, index).trim() === name) return part.slice(index + 1).trim()
  }
  return null
}
