// The clocks a layer may read that the grader cannot move (bank/clock.ts
// moves Date and the timers; harness/pgClock.ts moves PostgreSQL's now()).
// When the graded folder reads one of these, each timed check is run again
// on the real clock, and that run decides (engine/runCheck.ts): the grade's clock can
// neither fail nor pass a lease or a TTL it does not drive.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Line, phrases } from '#harness/i18n/phrase.ts'

// The clocks' names, as templates the packs translate (i18n/<lang>.json, "messages": uncontrolledClocks.<key>).
const say = phrases('uncontrolledClocks', {
  unixepoch: "SQLite's unixepoch()",
  sqliteNow: "SQLite's 'now' (datetime('now'), julianday('now'), …)",
  currentTimestamp: 'the SQL keyword CURRENT_TIMESTAMP (or CURRENT_DATE, CURRENT_TIME)',
  localtimestamp: 'the SQL keyword LOCALTIMESTAMP (or LOCALTIME)',
  pgCatalog: "PostgreSQL's pg_catalog clock, written out in full",
})

const CLOCKS: Array<{ name: Line; pattern: RegExp }> = [
  { name: say('unixepoch'), pattern: /\bunixepoch\s*\(/i },
  { name: say('sqliteNow'), pattern: /\b(?:datetime|julianday|strftime|date|time|timediff)\s*\([^)]*'now'/i },
  { name: say('currentTimestamp'), pattern: /\bcurrent_(?:timestamp|date|time)\b/i },
  { name: say('localtimestamp'), pattern: /\blocaltime(?:stamp)?\b/i },
  { name: say('pgCatalog'), pattern: /\bpg_catalog\.(?:now|clock_timestamp|statement_timestamp|transaction_timestamp)\b/i },
  { name: 'performance.now()', pattern: /\bperformance\.now\s*\(/ },
  { name: 'process.hrtime()', pattern: /\bprocess\.hrtime\b/ },
]

/** The uncontrolled clocks the TypeScript and SQL files under `dir` mention, by name. */
export function uncontrolledClocks(dir: string): Line[] {
  const found = new Set<Line>()
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
