// --keep: the server of the first failure stays up after the grade, on the
// same port and database, so the curl printed with the failure works as
// printed. The grader exits; the server must not die with it.
import { spawn } from 'node:child_process'
import { openSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { request } from 'undici'
import type { Exchange } from '#harness/http.ts'
import { serverCommand, serverCwd, serverEnv, startCeilingMs, type ServerProcess } from '#harness/spawnServer.ts'
import type { Workspace } from '#harness/workspace.ts'

export type KeptClient = { id: string; name: string; apiKey: string; accounts: string[] }

export type KeptServer = {
  url: string
  pid: number
  adminToken: string
  dbPath: string
  log: string
  /** The clients (and their accounts) the failing check created, found in its requests. */
  clients: KeptClient[]
  /** One shell line that stops the server and removes its folders. */
  stop: string
}

/**
 * Replaces the grader's child by a detached one on the same port and
 * database: the grader's child writes to pipes that close when the grader
 * exits, and the grader kills its children on exit by design. What lives in
 * memory only (core simulator settings, held calls) is not carried over; every
 * row the failing check left is.
 */
export async function keepServer(server: ServerProcess, workspace: Workspace, adminToken: string, trace: Exchange[]): Promise<KeptServer> {
  const url = server.url
  const port = Number(new URL(url).port)
  await server.stop()
  const folders = workspace.keep()
  const log = join(workspace.tmp, 'kept-server.log')
  const out = openSync(log, 'a')
  // The learner's own server, kept for curl: on a port, outside any sandbox
  // (as nobody still, for a root grader: isolation "user").
  const options = { ...server.options, sandbox: undefined, outlivesGrader: true }
  const env = serverEnv(options, port)
  const { file, args } = serverCommand(options, env) // bank/main.ts, or the --server command
  const child = spawn(file, args, {
    cwd: serverCwd(options),
    env,
    detached: true,
    stdio: ['ignore', out, out],
  })
  child.unref()
  await waitForHealth(url)
  return {
    url,
    pid: child.pid!,
    adminToken,
    dbPath: server.options.dbPath,
    log,
    clients: clientsIn(trace),
    stop: `kill -TERM -${child.pid} && rm -rf ${folders.join(' ')}`,
  }
}

async function waitForHealth(url: string): Promise<void> {
  const deadline = Date.now() + startCeilingMs()
  while (Date.now() < deadline) {
    try {
      const res = await request(`${url}/health`, { headersTimeout: 1_000, bodyTimeout: 1_000 })
      await res.body.text()
      if (res.statusCode === 200) return
    } catch {
      // not listening yet
    }
    await sleep(100)
  }
  throw new Error(`the kept server did not answer GET ${url}/health`)
}

/** Clients created (POST /admin/clients → 201) and the accounts each opened (POST /accounts → 201). */
export function clientsIn(trace: Exchange[]): KeptClient[] {
  const byKey = new Map<string, KeptClient>()
  const json = (e: Exchange) => {
    try {
      return JSON.parse(e.response!.body)
    } catch {
      return undefined
    }
  }
  for (const e of trace) {
    if (e.request.method !== 'POST' || e.response?.status !== 201) continue
    const path = new URL(e.request.url).pathname
    const body = json(e)
    if (path === '/admin/clients' && body?.apiKey) byKey.set(body.apiKey, { id: body.id, name: body.name ?? '', apiKey: body.apiKey, accounts: [] })
    if (path === '/accounts' && body?.id) {
      const apiKey = /^Bearer (.+)$/.exec(e.request.headers.Authorization ?? '')?.[1]
      if (apiKey) byKey.get(apiKey)?.accounts.push(body.id)
    }
  }
  return [...byKey.values()]
}
