// The bank's HTTP surface on PostgreSQL: the same contract as ../app.ts
// (CONTRACT.md, "PostgreSQL mode"), its validation, problems, auth and body
// parsing reused; only the storage is asynchronous.
import { randomUUID } from 'node:crypto'
import express, { type NextFunction, type Request, type Response } from 'express'
import type { z } from 'zod'
import { operationHeaders, parse, requireHost, toProblem } from '../app.ts'
import { hashApiKey, newApiKey, requireAdmin } from '../auth.ts'
import { jsonBody, type RawRequest } from '../body.ts'
import type { Config } from '../config.ts'
import { clockAdmin } from '../clockAdmin.ts'
import { CoreBanking } from '../core.ts'
import { repeatedKeyProblem } from '../keyLines.ts'
import { HttpProblem, jsonOutcome, problem, writeOutcome as send, type Outcome } from '../problem.ts'
import { requestLog } from '../requestLog.ts'
import { CoreUpdate, DepositBody, NewAccount, NewClient, TransferBody } from '../schemas.ts'
import { storableParam } from '../storableText.ts'
import { inTransaction, type Pool, type Tx } from './db.ts'
import type { PgLayer, PgOperation } from './layer.ts'
import { deposit, transfer } from './money.ts'

const unauthorized = (detail: string) => new HttpProblem(problem(401, 'unauthorized', 'Unauthorized', detail, { headers: { 'WWW-Authenticate': 'Bearer' } }))

function requireClient(pool: Pool) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const token = /^Bearer\s+(\S+)$/i.exec(req.get('authorization') ?? '')?.[1]
    if (!token) throw unauthorized('Send your API key as "Authorization: Bearer <key>".')
    const { rows } = await pool.query<{ id: string }>('SELECT id FROM clients WHERE api_key_hash = $1', [hashApiKey(token)])
    if (!rows[0]) throw unauthorized('That API key is not known.')
    res.locals.clientId = rows[0].id
    next()
  }
}

const iso = (d: Date) => d.toISOString()

export function createPgApp(pool: Pool, config: Config, layer: PgLayer) {
  const app = express()
  app.disable('x-powered-by')
  app.set('etag', false)
  app.use(requestLog())
  const core = new CoreBanking(config.processingDelayMs)
  const client = requireClient(pool)
  const admin = requireAdmin(config.adminToken)
  app.use(requireHost)
  app.use(jsonBody(config.bodyLimit))
  app.param('id', storableParam)

  app.get('/health', (_req, res) => send(res, jsonOutcome(200, { status: 'ok', pid: process.pid })))

  app.post('/admin/clients', admin, async (req, res) => {
    const { name } = parse(NewClient, req.body)
    const id = `cl_${randomUUID()}`
    const apiKey = newApiKey()
    await pool.query('INSERT INTO clients (id, name, api_key_hash) VALUES ($1, $2, $3)', [id, name, hashApiKey(apiKey)])
    send(res, jsonOutcome(201, { id, name, apiKey }))
  })

  app.get('/admin/ledger', admin, async (_req, res) => {
    // REPEATABLE READ: accounts and entries from one snapshot, as SQLite's transaction gives.
    const read = await inTransaction(pool, async (tx) => {
      await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ')
      const accounts = await tx.query('SELECT id, client_id AS "clientId", balance, opened_with AS "openedWith" FROM accounts ORDER BY seq')
      const entries = await tx.query<{ createdAt: Date }>(
        `SELECT id, kind, client_id AS "clientId", from_account AS "from", to_account AS "to", amount, created_at AS "createdAt"
         FROM ledger ORDER BY seq`,
      )
      return { accounts: accounts.rows, entries: entries.rows.map((e) => ({ ...e, createdAt: iso(e.createdAt) })) }
    })
    send(res, jsonOutcome(200, read))
  })

  app.get('/admin/core', admin, (_req, res) => send(res, jsonOutcome(200, core.state())))
  app.put('/admin/core', admin, (req, res) => send(res, jsonOutcome(200, core.update(parse(CoreUpdate, req.body)))))
  clockAdmin(app, admin, parse)

  app.post('/accounts', client, async (req, res) => {
    const { balance } = parse(NewAccount, req.body)
    const id = `acc_${randomUUID()}`
    await pool.query('INSERT INTO accounts (id, client_id, balance, opened_with) VALUES ($1, $2, $3, $3)', [id, res.locals.clientId, balance])
    send(res, jsonOutcome(201, { id, balance }, { Location: `/accounts/${id}` }))
  })

  app.get('/accounts/:id', client, async (req, res) => {
    const { rows } = await pool.query<{ id: string; clientId: string; balance: number }>(
      'SELECT id, client_id AS "clientId", balance FROM accounts WHERE id = $1',
      [String(req.params.id)],
    )
    const account = rows[0]
    if (!account) throw new HttpProblem(problem(404, 'account-not-found', 'Account not found', `There is no account ${req.params.id}.`))
    if (account.clientId !== res.locals.clientId)
      throw new HttpProblem(problem(403, 'not-account-owner', 'Not your account', `Account ${account.id} belongs to another client.`))
    send(res, jsonOutcome(200, { id: account.id, balance: account.balance }))
  })

  for (const kind of ['transfer', 'deposit'] as const) {
    app.get(`/${kind}s/:id`, client, async (req, res) => {
      const { rows } = await pool.query<{ createdAt: Date }>(
        `SELECT id, from_account AS "from", to_account AS "to", amount, created_at AS "createdAt"
         FROM ledger WHERE id = $1 AND kind = $2 AND client_id = $3`,
        [String(req.params.id), kind, res.locals.clientId],
      )
      const entry = rows[0]
      if (!entry) throw new HttpProblem(problem(404, `${kind}-not-found`, 'Not found', `You have no ${kind} ${req.params.id}.`))
      send(res, jsonOutcome(200, { ...entry, createdAt: iso(entry.createdAt) }))
    })
  }

  function moneyRoute<S extends z.ZodType>(path: string, schema: S, move: (tx: Tx, clientId: string, payload: z.infer<S>) => Promise<Outcome>) {
    const route = `POST ${path}`
    app.post(path, client, async (req: Request, res: Response) => {
      const clientId: string = res.locals.clientId
      const payload = parse(schema, req.body)
      const repeated = repeatedKeyProblem(req.headersDistinct)
      if (repeated) return send(res, repeated, layer.policyHeaders)
      const op: PgOperation = {
        clientId,
        route,
        path: req.path,
        idempotencyKey: req.get('idempotency-key'),
        headers: operationHeaders(req),
        payload: req.body,
        rawBody: (req as RawRequest).rawBody ?? '',
        async execute(inSameTransaction) {
          // The core call first, with no connection taken and no transaction open.
          if ((await core.call()) === 'unavailable')
            return problem(503, 'core-unavailable', 'Core banking unavailable', 'No money moved; try again.', {
              headers: { 'Retry-After': '1' },
            })
          const outcome = await inTransaction(pool, async (tx) => {
            const outcome = await move(tx, clientId, payload)
            await inSameTransaction?.(outcome, tx)
            return outcome
          })
          // Committed. The fault point of PUT /admin/core's crashAfterCommit (the same in ../app.ts).
          core.afterCommit()
          return outcome
        },
      }
      send(res, await layer.handle(op), layer.policyHeaders)
    })
  }
  moneyRoute('/transfers', TransferBody, transfer)
  moneyRoute('/deposits', DepositBody, deposit)

  app.use((req: Request) => {
    throw new HttpProblem(problem(404, 'not-found', 'Not found', `No route ${req.method} ${req.path}.`))
  })
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) return void res.destroy()
    send(res, toProblem(err))
  })
  return app
}
