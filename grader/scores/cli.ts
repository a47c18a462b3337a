// npm run scores -- [--store FILE] [--stage N] [--roster DIR] [--csv FILE] [--html FILE]
import { existsSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgsOrExit } from '#harness/cliArgs.ts'
import { findStage } from '#harness/course.ts'
import { listSubmissions, RosterError } from '../roster/roster.ts'
import { DEFAULT_STORE, ResultsStore } from '../roster/store.ts'
import { renderCsv } from './csv.ts'
import { renderHtml } from './html.ts'
import { summarize } from './summary.ts'
import { renderText } from './text.ts'

const USAGE = `usage: npm run scores -- [options]

  --store FILE   the results store (default results/grades.sqlite)
  --stage N      only runs that graded stage N (default: each learner's latest run)
  --roster DIR   the class is also every checkout folder in DIR: one without a
                 stored run is listed as "not graded" (the learners of every
                 roster graded into the store always are)
  --csv FILE     also write the summary as CSV (learner, points per stage, total, ...)
  --html FILE    also write a self-contained HTML report with pass-rate charts`

const { values } = parseArgsOrExit(USAGE, {
  options: {
    store: { type: 'string', default: DEFAULT_STORE },
    stage: { type: 'string' },
    roster: { type: 'string' },
    csv: { type: 'string' },
    html: { type: 'string' },
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
