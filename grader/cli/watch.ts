// npm run watch -- <stage> [--all] [--solution | --dir PATH] [--seed N] [--lang L]
// Grades a stage, then grades it again each time a file in its folder is
// saved: the screen is cleared, the stage's own checks run first, and the run
// stops at the first failure (--all runs every check) with the verdict and
// the next step. Ctrl-C stops it and every process it started.
import { watch } from 'node:fs'
import { resolve } from 'node:path'
import chalk from 'chalk'
import { languageOrExit, parseArgsOrExit } from '#harness/cliArgs.ts'
import { course, findStage } from '#harness/course.ts'
import { t } from '#harness/i18n/messages.ts'
import { nextStep } from '../output/nextStep.ts'
import { repoRoot } from '#harness/paths.ts'
import { installSignalCleanup, interrupted } from '#harness/processes.ts'
import { printCheck, printDatabaseStart, printHeader, printSummary, stageHeadings } from '../output/report.ts'
import { newSeed } from '#harness/rng.ts'
import { grade } from '../grade.ts'
import type { Source } from '#harness/workspace.ts'

/** Editors write a file in several steps (truncate, write, rename): one regrade for the lot. */
const SETTLE_MS = 150

const USAGE = `usage: npm run watch -- <stage> [--all] [--solution | --dir PATH] [--seed N] [--lang L]

  <stage>      0, stage0, or a slug such as unique-key
  --all        run every check, not only up to the first failure
  --solution   watch the reference solution instead of stages/
  --dir PATH   watch the learner files of another checkout of the course
  --seed N     the seed of every grade (default: a new one each time)
  --lang L     the language it speaks: en, zh-CN or ko (as npm run grade -- --help says)`

installSignalCleanup()
const { values, positionals } = parseArgsOrExit(USAGE, {
  allowPositionals: true,
  options: {
    all: { type: 'boolean', default: false },
    solution: { type: 'boolean', default: false },
    dir: { type: 'string' },
    seed: { type: 'string' },
    lang: { type: 'string' },
  },
})
if (positionals.length !== 1) {
  console.error(USAGE)
  process.exit(2)
}
const stage = findStage(positionals[0]!)
const lang = languageOrExit(USAGE, values.lang)
const source: Source = values.solution ? { kind: 'solution' } : values.dir ? { kind: 'dir', path: resolve(values.dir) } : { kind: 'starter' }
const folder =
  source.kind === 'dir' ? resolve(source.path, 'stages', stage.folder) : resolve(repoRoot, source.kind === 'solution' ? 'solutions' : 'stages', stage.folder)
/** Checks of a full grade: the stage's own and every earlier stage's. */
const planned = course.stages.filter((s) => s.number <= stage.number).reduce((n, s) => n + s.checks.length, 0)

let running = false
let again = false
let settle: NodeJS.Timeout | undefined

async function regrade(reason: string) {
  // Interrupted: processes.ts stops the grade's servers and exits (130 or 143); the cut grade ends in InterruptedError, which it swallows.
  if (interrupted()) return
  if (running) {
    again = true // a save during a grade: one more grade when it ends
    return
  }
  running = true
  // A terminal gets a clean screen; a log or a pipe gets a ruler instead of escape codes.
  if (process.stdout.isTTY) process.stdout.write('\x1b[2J\x1b[3J\x1b[H')
  else console.log(chalk.dim(`\n──── ${reason} ────`))
  const seed = values.seed !== undefined ? Number(values.seed) : newSeed()
  printHeader(stage, seed, folder, lang)
  const result = await grade({
    stage: stage.number,
    seed,
    source,
    stopAtFirstFailure: !values.all,
    onCheckStart: stageHeadings(stage.number, lang),
    onDatabaseStart: (s) => printDatabaseStart(s, lang),
    onCheckEnd: (r) => printCheck(r, lang),
  })
  printSummary(result, lang)
  const skipped = planned - result.checks.length
  if (skipped > 0) console.log(chalk.dim(t(lang, 'watch.stopped', { count: skipped })))
  console.log(chalk.bold(nextStep(result, { partial: false }, undefined, lang)))
  console.log(chalk.dim(t(lang, 'watch.watching', { folder })))
  running = false
  if (again) {
    again = false
    await regrade('changed during the last grade')
  }
}

watch(folder, (_event, file) => {
  if (file && !/\.(?:[cm]?[jt]s|json|sql)$/.test(file)) return // editor swap and backup files
  clearTimeout(settle)
  settle = setTimeout(() => void regrade(`${file ?? 'a file'} changed`), SETTLE_MS)
})
void regrade('first grade')
