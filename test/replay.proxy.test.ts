// The fault proxy's faults are real: a dropped response was processed by the
// server, a reset request never reached it, and requests sent while the
// server restarts reach the new process. As a balancer it goes round-robin
// over its upstreams, skipping one taken out of rotation.
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BankClient, type Customer } from '#harness/bankClient.ts'
import { HttpClient } from '#harness/http.ts'
import { repoRoot } from '#harness/paths.ts'
import { ServerProcess } from '#harness/spawnServer.ts'
import { FAULT_HEADER, FaultProxy } from '../replay/proxy.ts'
import { Sender } from '../replay/sender.ts'

const dir = mkdtempSync(join(tmpdir(), 'proxy-'))
const adminToken = 'proxy-test-admin-token'
let server = new ServerProcess({ stageDir: resolve(repoRoot, 'solutions/00-unprotected'), dbPath: join(dir, 'bank.sqlite'), adminToken })
const http = new HttpClient(() => undefined)
let proxy: FaultProxy
let sender: Sender
let customer: Customer
let from: string
let to: string

beforeAll(async () => {
  await server.start()
  proxy = new FaultProxy([server.url])
  await proxy.start()
  sender = new Sender(proxy.url, 2)
  const bank = new BankClient(server, http, adminToken)
  customer = await bank.newCustomer('proxy test')
  from = await bank.openAccount(customer, 1_000_000)
  to = await bank.openAccount(customer, 0)
})

afterAll(async () => {
  await sender?.close()
  await proxy?.stop()
  await server.stop()
  rmSync(dir, { recursive: true, force: true })
})

const transfer = (amount: number, fault?: string) =>
  sender.send({
    method: 'POST',
    path: '/transfers',
    body: { from, to, amount },
    headers: { Authorization: `Bearer ${customer.apiKey}`, ...(fault ? { [FAULT_HEADER]: fault } : {}) },
  })
const amounts = async () => (await new BankClient(server, http, adminToken).ledger()).entries.map((e) => e.amount)

describe('the fault proxy', () => {
  it('drop-response: the client gets no answer, yet the transfer happened', async () => {
    const e = await transfer(1_100, 'drop-response')
    expect(e.response).toBeUndefined()
    expect(e.error).toBeTruthy()
    expect(await amounts()).toEqual([1_100])
  })

  it('reset-before: the client gets no answer, and the server never saw the request', async () => {
    const e = await transfer(2_200, 'reset-before')
    expect(e.response).toBeUndefined()
    expect(e.error).toBeTruthy()
    expect(await amounts()).toEqual([1_100])
  })

  it('no fault: the request and its answer pass through', async () => {
    const e = await transfer(3_300)
    expect(e.response?.status).toBe(201)
    expect(JSON.parse(e.response!.body)).toMatchObject({ from, to, amount: 3_300 })
    expect(await amounts()).toEqual([1_100, 3_300])
  })

  it('holds requests while the server restarts, then sends them to the new process', async () => {
    proxy.takeOut(0)
    await server.crash()
    const waiting = transfer(4_400) // sent while no server is running
    server = new ServerProcess(server.options)
    await server.start()
    proxy.putBack(0, server.url)
    expect((await waiting).response?.status).toBe(201)
    expect(await amounts()).toEqual([1_100, 3_300, 4_400])
  })
})

describe('the fault proxy as a round-robin balancer', () => {
  // Three stand-in upstreams that answer with their place in the list.
  const upstreams = [0, 1, 2].map((place) => createServer((_, res) => res.end(String(place))))
  const connections = [0, 0, 0]
  upstreams.forEach((u, place) => u.on('connection', () => connections[place]!++))
  let balancer: FaultProxy
  let client: Sender
  const urls = () => upstreams.map((u) => `http://127.0.0.1:${(u.address() as AddressInfo).port}`)
  const answeredBy = async (n: number, fault?: string) => {
    const places: string[] = []
    for (let i = 0; i < n; i++) {
      const e = await client.send({ method: 'GET', path: '/', headers: fault ? { [FAULT_HEADER]: fault } : {} })
      places.push(e.response?.body ?? 'no answer')
    }
    return places.join(' ')
  }

  beforeAll(async () => {
    for (const u of upstreams) await new Promise<void>((done) => u.listen(0, '127.0.0.1', done))
    balancer = new FaultProxy(urls())
    await balancer.start()
    client = new Sender(balancer.url, 2)
  })

  afterAll(async () => {
    await client?.close()
    await balancer?.stop()
    for (const u of upstreams) u.close()
  })

  it('sends request i to upstream i mod 3', async () => {
    expect(await answeredBy(6)).toBe('0 1 2 0 1 2')
    expect(balancer.forwarded).toEqual([2, 2, 2])
  })

  it('skips an upstream taken out of rotation, and a reset request takes no turn', async () => {
    balancer.takeOut(1)
    expect(await answeredBy(4)).toBe('0 2 0 2')
    expect(await answeredBy(1, 'reset-before')).toBe('no answer')
    balancer.putBack(1, urls()[1]!)
    expect(await answeredBy(3)).toBe('0 1 2')
    expect(balancer.forwarded).toEqual([5, 3, 5])
  })

  // A pooled connection the upstream closes as it idles (Node's keepAliveTimeout)
  // can be reused at that very moment: ECONNRESET, and a client cut off as if a
  // server had died. One connection per request rules the race out.
  it('opens a connection of its own for every request, so none is cut by an idle timeout', () => {
    expect(connections).toEqual(balancer.forwarded)
    expect(balancer.applied['server-killed']).toBe(0)
  })
})
