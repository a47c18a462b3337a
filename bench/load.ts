// The load generator: a closed loop of POST /transfers over a fixed number of
// keep-alive connections, in this (the bench's) process.
//
// Why closed-loop with few connections: on a 2-core machine the server and the
// load generator share the CPU. Each connection has exactly one request in
// flight, so the generator can never queue more work than the server can
// take, and its own cost per request stays small (one undici request, no
// pipelining). 8 connections keep a single-threaded server busy without
// building a deep accept queue that would only inflate latency.
//
// With several instances of one bank (stage 6 on PostgreSQL), the generator
// spreads the requests round-robin over them, as a balancer would.
import { readFileSync } from 'node:fs'
import { Pool } from 'undici'
import type { Customer } from '#harness/bankClient.ts'
import type { ServerProcess } from '#harness/spawnServer.ts'

export const DEFAULT_CONNECTIONS = 8

/** One bank under test: its instances (one, or several on one database), and the client whose two accounts it moves ₩1 between. */
export type LoadTarget = {
  label: string
  servers: ServerProcess[]
  customer: Customer
  from: string
  to: string
  /** CPU time used so far by the database server, when it is a process of its own we can see (ms). */
  databaseCpuMs?: () => number | null
}

/** The next request to send: its Idempotency-Key and the exact body text. */
export type Workload = { next(): { key: string; body: string } }

/** Which responses are valid for this workload; anything else aborts the bench. */
export type Accept = (status: number) => boolean

export type Segment = {
  requests: number
  elapsedMs: number
  latenciesMs: number[]
  /** Responses counted by status, `+replayed` when they carried Idempotent-Replayed: true. */
  outcomes: Record<string, number>
  /** CPU time of the servers' main threads during the segment, all instances together (null where /proc is missing). */
  serverCpuMs: number | null
  /** CPU time of the database server during the segment (null for SQLite, which runs on the bank's thread, or when unseen). */
  databaseCpuMs: number | null
}

/**
 * CPU time a process's main thread has used, from /proc/PID/schedstat (ns).
 * The bank's event loop, its SQLite calls included, all run on that thread,
 * so its CPU time per request is the cost of a request. Other processes
 * competing for the cores move it far less than they move throughput.
 */
export function mainThreadCpuMs(pid: number | undefined): number | null {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6
  } catch {
    return null
  }
}

function serversCpuMs(servers: ServerProcess[]): number | null {
  let total = 0
  for (const server of servers) {
    const ms = mainThreadCpuMs(server.pid)
    if (ms === null) return null
    total += ms
  }
  return total
}

const elapsedCpu = (before: number | null, after: number | null) => (before !== null && after !== null ? after - before : null)

class UnexpectedResponse extends Error {}

/** Runs until `durationMs` has passed, or until exactly `requests` requests were sent. */
export async function runSegment(
  target: LoadTarget,
  workload: Workload,
  accept: Accept,
  until: { durationMs: number } | { requests: number },
  connections = DEFAULT_CONNECTIONS,
): Promise<Segment> {
  // A new pool per segment: between segments a server sits idle longer than
  // its keep-alive timeout, and a POST sent on a socket the server is closing
  // fails (undici does not retry non-idempotent requests, rightly).
  const pools = target.servers.map((server) => new Pool(server.url, { connections, pipelining: 1 }))
  const segment: Segment = { requests: 0, elapsedMs: 0, latenciesMs: [], outcomes: {}, serverCpuMs: null, databaseCpuMs: null }
  const authorization = `Bearer ${target.customer.apiKey}`
  let turn = 0
  const cpuBefore = serversCpuMs(target.servers)
  const databaseBefore = target.databaseCpuMs?.() ?? null
  const started = performance.now()
  const deadline = 'durationMs' in until ? started + until.durationMs : Infinity
  let budget = 'requests' in until ? until.requests : Infinity

  async function worker() {
    try {
      await loop()
    } catch (error) {
      budget = 0 // stop the other connections too
      throw error
    }
  }
  async function loop() {
    while (budget > 0 && performance.now() < deadline) {
      budget--
      const { key, body } = workload.next()
      const instance = turn++ % pools.length
      const t0 = performance.now()
      const res = await pools[instance]!.request({
        method: 'POST',
        path: '/transfers',
        headers: { authorization, 'content-type': 'application/json', 'idempotency-key': key },
        body,
      })
      const text = await res.body.text()
      segment.latenciesMs.push(performance.now() - t0)
      if (!accept(res.statusCode))
        throw new UnexpectedResponse(
          `${target.label} answered ${res.statusCode} to POST /transfers (key ${key}): ${text.slice(0, 300)}\n${target.servers[instance]!.logTail(5)}`,
        )
      const outcome = res.headers['idempotent-replayed'] === 'true' ? `${res.statusCode}+replayed` : String(res.statusCode)
      segment.outcomes[outcome] = (segment.outcomes[outcome] ?? 0) + 1
      segment.requests++
    }
  }

  try {
    await Promise.all(Array.from({ length: connections }, worker))
  } finally {
    segment.elapsedMs = performance.now() - started
    segment.serverCpuMs = elapsedCpu(cpuBefore, serversCpuMs(target.servers))
    segment.databaseCpuMs = elapsedCpu(databaseBefore, target.databaseCpuMs?.() ?? null)
    await Promise.all(pools.map((pool) => pool.close()))
  }
  return segment
}
