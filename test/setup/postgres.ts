// One embedded PostgreSQL for a whole test run, shared by every test file
// that needs one (each makes databases of its own on it and drops them):
// initdb and a start cost a few seconds of CPU, once instead of once per
// file. Tests that are about the embedded server itself (its start, its
// cleanup on an interrupt) still start their own.
import type { TestProject } from 'vitest/node'
import { type PgServer, startPostgres } from '#harness/postgres.ts'
import { havePostgres } from '../helpers/postgres.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's PostgreSQL (its admin URL, with its socket folder as `host`), or '' when this platform has none. */
    postgresUrl: string
  }
}

export default async function startRunPostgres(project: TestProject): Promise<() => Promise<void>> {
  // {}: the embedded server, whatever LAB_DATABASE_URL says.
  const server: PgServer | undefined = havePostgres ? await startPostgres({}) : undefined
  project.provide('postgresUrl', server?.adminUrl ?? '')
  return async () => {
    await server?.stop()
  }
}
