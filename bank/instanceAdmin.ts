// GET/PUT /admin/instance: this instance's settings and database, which the
// grader changes between checks instead of starting another process
// (generations.ts). PUT takes every setting (a missing one is its default)
// and, optionally, another database, and answers once the new generation
// takes requests.
//
// The database can only move next to the one the bank started with: another
// SQLite file in the same folder, or another database on the same
// PostgreSQL server. The admin token does not open the rest of the disk.
import { basename, dirname, join } from 'node:path'
import type { Express, RequestHandler } from 'express'
import { z } from 'zod'
import { type Config, SETTINGS, type Settings, SettingsBody } from './config.ts'
import type { Generations } from './generations.ts'
import { HttpProblem, jsonOutcome, problem, writeOutcome as send } from './problem.ts'

const InstanceUpdate = z.strictObject({
  settings: SettingsBody.default(SettingsBody.parse({})),
  // A SQLite file name (bank-7.sqlite) or a PostgreSQL database name (lab_7): where the new generation keeps its data.
  database: z
    .string()
    .regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}$/)
    .optional(),
})

const settingsOf = (config: Config): Settings => Object.fromEntries(Object.keys(SETTINGS).map((name) => [name, config[name as keyof Settings]])) as Settings

/** The database's name as PUT /admin/instance takes it: the SQLite file's, or the PostgreSQL database's. */
const databaseOf = (config: Config) => (config.databaseUrl ? new URL(config.databaseUrl).pathname.slice(1) : basename(config.dbPath))

function state(generations: Generations) {
  const { number, config } = generations.current
  return { generation: number, settings: settingsOf(config), database: databaseOf(config) }
}

/** The config of a generation on `database` (beside the current one), or the same database. */
function moved(config: Config, database: string | undefined): Config {
  if (database === undefined || database === databaseOf(config)) return config
  if (config.databaseUrl) {
    const url = new URL(config.databaseUrl)
    url.pathname = `/${database}`
    return { ...config, databaseUrl: url.href }
  }
  if (!database.endsWith('.sqlite'))
    throw new HttpProblem(problem(400, 'invalid-body', 'Invalid request body', 'database: a SQLite file name ending in .sqlite'))
  return { ...config, dbPath: join(dirname(config.dbPath), database) }
}

/** What a process started with these would read: a layer that reads the environment sees what its config says. */
function exportToEnvironment(config: Config) {
  for (const [name, { variable }] of Object.entries(SETTINGS)) process.env[variable] = String(config[name as keyof Settings])
  if (config.databaseUrl) process.env.LAB_DATABASE_URL = config.databaseUrl
  else process.env.LAB_DB = config.dbPath
}

export function instanceAdmin(
  app: Express,
  admin: RequestHandler,
  parse: <S extends z.ZodType>(schema: S, body: unknown) => z.infer<S>,
  generations: () => Generations,
) {
  app.get('/admin/instance', admin, (_req, res) => send(res, jsonOutcome(200, state(generations()))))
  app.put('/admin/instance', admin, async (req, res) => {
    const { settings, database } = parse(InstanceUpdate, req.body)
    const current = generations().current.config
    const config = { ...moved(current, database), ...settings }
    exportToEnvironment(config)
    try {
      // This request is one of the old generation's: it waits for the new one, so it is not waited for.
      await generations().renew(config, config.dbPath === current.dbPath && config.databaseUrl === current.databaseUrl, 1)
    } catch (error) {
      exportToEnvironment(current) // the old generation goes on, as it was
      throw error
    }
    send(res, jsonOutcome(200, state(generations())))
  })
}
