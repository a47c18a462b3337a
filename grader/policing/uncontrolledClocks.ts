// The clocks a layer may read that the grader cannot move (bank/clock.ts
// moves Date and the timers; harness/pgClock.ts moves PostgreSQL's now()).
// When the graded folder reads one of these, each timed check is run again
// on the real clock, and that run decides (engine/runCheck.ts): the grade's clock can
// neither fail nor pass a lease or a TTL it does not drive.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

const CLOCKS: Array<{ name: string; pattern: RegExp }> = [
  { name: "SQLite's unixepoch()", pattern: /\bunixepoch\s*\(/i },
  { name: "SQLite's 'now' (datetime('now'), julianday('now'), …)", pattern: /\b(?:datetime|julianday|strftime|date|time|timediff)\s*\([^)]*'now'/i },
  { name: 'the SQL keyword CURRENT_TIMESTAMP (or CURRENT_DATE, CURRENT_TIME)', pattern: /\bcurrent_(?:timestamp|date|time)\b/i },
  { name: 'the SQL keyword LOCALTIMESTAMP (or LOCALTIME)', pattern: /\blocaltime(?:stamp)?\b/i },
  { name: "PostgreSQL's pg_catalog clock, written out in full", pattern: /\bpg_catalog\.(?:now|clock_timestamp|statement_timestamp|transaction_timestamp)\b/i },
  { name: 'performance.now()', pattern: /\bperformance\.now\s*\(/ },
  { name: 'process.hrtime()', pattern: /\bprocess\.hrtime\b/ },
]

/** The uncontrolled clocks the TypeScript and SQL files under `dir` mention, by name. */
export function uncontrolledClocks(dir: string): string[] {
  const found = new Set<string>()
  for (const text of sourceTexts(dir)) for (const { name, pattern } of CLOCKS) if (pattern.test(text)) found.add(name)
  return [...found]
}

function sourceTexts(dir: string): string[] {
  const texts: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !/\.(?:[cm]?[jt]s|sql)$/.test(entry.name)) continue
    const path = join(entry.parentPath, entry.name)
    if (path.includes('node_modules')) continue
    texts.push(readFileSync(path, 'utf8'))
  }
  return texts
}
