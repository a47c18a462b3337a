// The grade's PostgreSQL answers now() from the grader's timeline. Stage 6
// teaches that the database's clock decides a lease and an expiry, so that
// clock is the one the grader must own.
//
// Each grade database gets a schema `lab_clock` holding one row (the frozen
// moment, or NULL for the real clock) and functions named like pg_catalog's
// now(), transaction_timestamp(), statement_timestamp() and clock_timestamp()
// that read it. The database's search_path lists lab_clock before pg_catalog
// (and after public, so tables are still made in public and current_schema()
// stays public), so an unqualified now() (in a query, or a column's DEFAULT) is ours.
//
// What it cannot cover: CURRENT_TIMESTAMP, LOCALTIMESTAMP, CURRENT_DATE and
// friends are keywords, not function calls, and read the real transaction
// start; so does pg_catalog.now() written out in full. When a layer uses one
// of them, each timed check is run again on the real clock (grader/engine/runCheck.ts).
import type pg from 'pg'

const stuck = (fn: string) =>
  `CREATE FUNCTION lab_clock.${fn}() RETURNS timestamptz LANGUAGE sql STABLE PARALLEL SAFE
     AS $$ SELECT coalesce((SELECT at FROM lab_clock.frozen), pg_catalog.${fn}()) $$`

/** Installs the clock in database `name` (run as its owner, connected to it), standing at `nowMs`, or real when undefined. */
export async function installPgClock(client: pg.Client, name: string, nowMs: number | undefined): Promise<void> {
  await client.query(`
    CREATE SCHEMA lab_clock;
    CREATE TABLE lab_clock.frozen (only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row), at timestamptz);
    ${['now', 'transaction_timestamp', 'statement_timestamp', 'clock_timestamp'].map(stuck).join(';\n')};
    GRANT USAGE ON SCHEMA lab_clock TO PUBLIC;
    GRANT SELECT ON lab_clock.frozen TO PUBLIC;
    ALTER DATABASE ${name} SET search_path = "$user", public, lab_clock, pg_catalog;`)
  await client.query('INSERT INTO lab_clock.frozen (at) VALUES ($1)', [toTimestamp(nowMs)])
}

/** Moves database's clock to `nowMs` (undefined: the real clock again). */
export async function setPgClock(client: pg.Client, nowMs: number | undefined): Promise<void> {
  await client.query('UPDATE lab_clock.frozen SET at = $1', [toTimestamp(nowMs)])
}

/** Milliseconds since the epoch as timestamptz text, exact to the millisecond. */
const toTimestamp = (nowMs: number | undefined) => (nowMs === undefined ? null : new Date(nowMs).toISOString())
