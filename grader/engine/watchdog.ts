// Whether a server has stopped answering. A check waits on its server, and
// a server that answers nothing any more would hold each check to its time
// limit in turn: the limits of a full stage 6 grade add up to more than half
// an hour. So while a check runs, its instances' GET /health is probed, and a
// server that leaves the probe unanswered for HUNG_AFTER_MS is hung: the grade
// stops there, with one verdict. A busy machine is not a hung server: a probe
// that is answered late is still answered, and only a silence this long,
// hundreds of times what an answer takes on a loaded machine, counts.
//
// A server whose health route answers but whose money routes do not (a
// layer that never settles) is found after a check timed out: one more
// deposit, through the layer, must be answered within HUNG_AFTER_MS too.
import { setTimeout as sleep } from 'node:timers/promises'
import { request } from 'undici'
import type { ServerProcess } from '#harness/spawnServer.ts'
import { type Line, phrases } from '#harness/i18n/phrase.ts'

/** Silence after which a server is hung. */
export const HUNG_AFTER_MS = 10_000
/** How often health is asked while a check runs. */
const PROBE_EVERY_MS = 1_000

/** Thrown into a check whose server stopped answering: the grade stops with it. */
// What a hang tells the learner, as a template the packs translate (i18n/<lang>.json, "messages": watchdog.<key>).
const say = phrases('watchdog', { noHealth: 'GET /health had no answer for {seconds} s' })

export class ServerHungError extends Error {
  constructor(
    readonly what: Line,
    readonly server: ServerProcess,
  ) {
    super(String(what))
  }
}

/**
 * Rejects with ServerHungError once one of `servers()` (alive and not
 * starting) has answered no GET /health for HUNG_AFTER_MS; `stop()` ends the
 * watch. A moment the grader itself stood still (its own loop late by more
 * than a probe's period: a machine so busy that it ran nothing of ours) is
 * no server's silence: every server is given that time back.
 */
export function watchHealth(servers: () => ServerProcess[]): { hung: Promise<never>; stop(): void } {
  const abort = new AbortController()
  const hung = new Promise<never>((_, reject) => {
    /** When each server last answered (or was first watched), for the process it is now. */
    const heard = new Map<ServerProcess, { pid: number | undefined; at: number }>()
    void (async () => {
      let tick = performance.now()
      while (!abort.signal.aborted) {
        const now = performance.now()
        if (now - tick > 2 * PROBE_EVERY_MS) for (const entry of heard.values()) entry.at = now
        tick = now
        for (const server of servers()) {
          if (!server.alive || server.isStarting) continue
          const last = heard.get(server)
          if (!last || last.pid !== server.pid) heard.set(server, { pid: server.pid, at: now })
          else if (now - last.at >= HUNG_AFTER_MS) return reject(new ServerHungError(say('noHealth', { seconds: Math.round((now - last.at) / 1000) }), server))
          const pid = server.pid
          // Not awaited: a hung server must not keep the others from being asked.
          void answers(server, '/health', abort.signal).then((ok) => {
            if (ok && server.pid === pid) heard.set(server, { pid, at: performance.now() })
          })
        }
        await sleep(PROBE_EVERY_MS, undefined, { signal: abort.signal }).catch(() => undefined)
      }
    })()
  })
  hung.catch(() => {}) // a check that ended first leaves nobody listening
  return { hung, stop: () => abort.abort() }
}

/**
 * After a check timed out: whether `server` still answers a money request,
 * a deposit under a fresh key into an account of a client made for the
 * purpose (admin routes answer without the layer; the deposit goes through it).
 */
export async function answersMoney(server: ServerProcess): Promise<boolean> {
  const token = { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' }
  try {
    const client = await json(server, '/admin/clients', token, { name: 'watchdog' })
    const account = await json(server, '/accounts', { ...token, authorization: `Bearer ${client.apiKey}` }, { balance: 1 })
    const key = `watchdog-${process.pid}-${Date.now()}`
    return await answers(server, '/deposits', undefined, {
      method: 'POST',
      headers: { authorization: `Bearer ${client.apiKey}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ to: account.id, amount: 1 }),
    })
  } catch {
    return false
  }
}

async function json(server: ServerProcess, path: string, headers: Record<string, string>, body: unknown) {
  const { endpoint } = server
  const res = await request(`${typeof endpoint === 'string' ? endpoint : endpoint.url}${path}`, {
    method: 'POST',
    dispatcher: typeof endpoint === 'string' ? undefined : endpoint.agent,
    headers,
    body: JSON.stringify(body),
    headersTimeout: HUNG_AFTER_MS,
    bodyTimeout: HUNG_AFTER_MS,
  })
  return (await res.body.json()) as { apiKey: string; id: string }
}

/** Whether `path` gets any answer within HUNG_AFTER_MS (any status: an answer is an answer). */
async function answers(
  server: ServerProcess,
  path: string,
  signal?: AbortSignal,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<boolean> {
  const { endpoint } = server
  try {
    const res = await request(`${typeof endpoint === 'string' ? endpoint : endpoint.url}${path}`, {
      ...init,
      dispatcher: typeof endpoint === 'string' ? undefined : endpoint.agent,
      headersTimeout: HUNG_AFTER_MS,
      bodyTimeout: HUNG_AFTER_MS,
      signal,
    })
    await res.body.dump()
    return true
  } catch {
    return false
  }
}
