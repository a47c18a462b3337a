// npm run scores -- [--store FILE] [--stage N] [--roster DIR] [--csv FILE] [--html FILE] [--lms canvas|moodle --identities FILE --out FILE]
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgsOrExit } from '#harness/cliArgs.ts'
import { findStage } from '#harness/course.ts'
import { listSubmissions, RosterError } from '../roster/roster.ts'
import { DEFAULT_STORE, ResultsStore } from '../roster/store.ts'
import { renderCsv } from './csv.ts'
import { renderHtml } from './html.ts'
import { IdentityMapError, LMSES, type Lms, parseIdentityMap, renderLms } from './lms.ts'
import { summarize } from './summary.ts'
import { renderText } from './text.ts'

const USAGE = `usage: npm run scores -- [options]

  --store FILE   the results store (default results/grades.sqlite)
  --stage N      only runs that graded stage N (default: each learner's latest run)
  --roster DIR   the class is also every checkout folder in DIR: one without a
                 stored run is listed as "not graded" (the learners of every
                 roster graded into the store always are)
  --csv FILE     also write the summary as CSV (learner, points per stage, total, ...)
  --html FILE    also write a self-contained HTML report with pass-rate charts
  --lms NAME     also write the file a gradebook imports: canvas or moodle, the
                 student's identity and one numeric column per stage, nothing
                 else; needs --identities and --out
  --identities FILE
                 CSV mapping each learner (folder or repository name) to the
                 LMS's identity: header learner,sis_login_id or sis_user_id
                 (Canvas), learner,email, idnumber or username (Moodle); a
                 learner of the class missing from it is an error
  --out FILE     where --lms writes its file`

const { values } = parseArgsOrExit(USAGE, {
  options: {
    store: { type: 'string', default: DEFAULT_STORE },
    stage: { type: 'string' },
    roster: { type: 'string' },
    csv: { type: 'string' },
    html: { type: 'string' },
    lms: { type: 'string' },
    identities: { type: 'string' },
    out: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
})
if (values.help) {
  console.log(USAGE)
  process.exit(0)
}

const storePath = resolve(values.store)
if (!existsSync(storePath)) {
  console.error(`no results store at ${storePath}: grade a class with \`npm run grade -- <stage> --roster DIR\` or import CI results first`)
  process.exit(2)
}
let stage: number | undefined
try {
  stage = values.stage === undefined ? undefined : findStage(values.stage).number
} catch (error) {
  console.error((error as Error).message)
  process.exit(2)
}
let named: string[] = []
try {
  named = values.roster === undefined ? [] : listSubmissions(values.roster).map((s) => s.learner)
} catch (error) {
  if (!(error instanceof RosterError)) throw error
  console.error(error.message)
  process.exit(2)
}
const lms = values.lms as Lms | undefined
if (lms !== undefined && !LMSES.includes(lms)) exitWith(`--lms ${lms}: one of ${LMSES.join(', ')}`)
const anyOfLms = [lms, values.identities, values.out]
if (anyOfLms.some((v) => v !== undefined) && anyOfLms.some((v) => v === undefined)) exitWith('--lms, --identities and --out go together')
const store = new ResultsStore(storePath)
const runs = store.latestRuns(stage)
const classList = [...store.rosterLearners(), ...named]
store.close()
const summary = summarize(runs, classList)
console.log(renderText(summary, storePath))
if (values.csv) {
  writeFileSync(values.csv, renderCsv(summary))
  console.log(`\nCSV written to ${values.csv}`)
}
if (values.html) {
  writeFileSync(values.html, renderHtml(summary))
  console.log(`HTML report written to ${values.html}`)
}
if (lms && values.identities && values.out) {
  try {
    if (!existsSync(values.identities)) exitWith(`--identities ${values.identities}: no such file`)
    const { csv, unused } = renderLms(summary, lms, parseIdentityMap(readFileSync(values.identities, 'utf8'), values.identities))
    for (const learner of unused) console.error(`${values.identities}: ${learner} is no learner of this class (no run, not in a roster): left out`)
    writeFileSync(values.out, csv)
    console.log(`${lms} gradebook import written to ${values.out} (${summary.learners.length} learners, ${summary.stages.length} stage column(s))`)
  } catch (error) {
    if (!(error instanceof IdentityMapError)) throw error
    exitWith(error.message)
  }
}

function exitWith(message: string): never {
  console.error(message)
  process.exit(2)
}
