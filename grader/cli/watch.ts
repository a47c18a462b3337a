// npm run watch -- <stage> [--all] [--solution | --dir PATH] [--seed N] [--lang L]
// Grades a stage, then grades it again each time a file in its folder is
// saved: the screen is cleared, the stage's own checks run first, and the run
// stops at the first failure (--all runs every check) with the verdict and
// the next step. Ctrl-C stops it and every process it started. On a terminal
// it also takes keys (watchKeys.ts decides what each does): h the next hint,
// n the next stage, a every check once, q quit.
import { type FSWatcher, watch } from 'node:fs'
import { emitKeypressEvents } from 'node:readline'
import { resolve } from 'node:path'
import chalk from 'chalk'
import { languageOfCommandLine, languageOrExit, parseArgsOrExit } from '#harness/cliArgs.ts'
import { course, findStage, stageByNumber } from '#harness/course.ts'
import { type Lang, rememberLangFlag } from '#harness/i18n/language.ts'
import { t } from '#harness/i18n/messages.ts'
import { type Line, say } from '#harness/i18n/phrase.ts'
import { WATCH_USAGE, usageText } from './usage.ts'
import { nextStep } from '../output/nextStep.ts'
import { repoRoot } from '#harness/paths.ts'
import { installSignalCleanup, interrupted, quit } from '#harness/processes.ts'
import { printCheck, printDatabaseStart, printHeader, printSummary, stageHeadings } from '../output/report.ts'
import { newSeed } from '#harness/rng.ts'
import { grade } from '../grade.ts'
import { checksOfGrade } from '../checks/index.ts'
import type { Source } from '#harness/workspace.ts'
import { printHints, revealNext } from './hints.ts'
import { recordGrade } from './progressRecord.ts'
import { commandOf, type Effect, initialState, step, type WatchEvent } from './watchKeys.ts'

/** Editors write a file in several steps (truncate, write, rename): one regrade for the lot. */
const SETTLE_MS = 150

/** The usage, in the command line's language (grader/cli/usage.ts). */
const usage = (lang: Lang = languageOfCommandLine()) => usageText(WATCH_USAGE, lang)

installSignalCleanup(() => t(languageOfCommandLine(), 'interrupted'))
const { values, positionals } = parseArgsOrExit(usage, {
  allowPositionals: true,
  options: {
    all: { type: 'boolean', default: false },
    solution: { type: 'boolean', default: false },
    dir: { type: 'string' },
    seed: { type: 'string' },
    lang: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
})
if (values.help || positionals.length !== 1) {
  console[values.help ? 'log' : 'error'](usage())
  process.exit(values.help ? 0 : 2)
}
const first = findStage(positionals[0]!)
const lang = languageOrExit(values.lang)
rememberLangFlag(values.lang, lang)
const source: Source = values.solution ? { kind: 'solution' } : values.dir ? { kind: 'dir', path: resolve(values.dir) } : { kind: 'starter' }
const folderOf = (number: number) => {
  const { folder } = stageByNumber(number)
  return source.kind === 'dir' ? resolve(source.path, 'stages', folder) : resolve(repoRoot, source.kind === 'solution' ? 'solutions' : 'stages', folder)
}
/** Checks of a full grade: the stage's own and every earlier stage's. */
/** Checks of a full grade: the stage's own and the earlier stages' that run as regression (not their histories). */
const planned = (number: number) => checksOfGrade(stageByNumber(number)).length
const keys = listenToKeys()

let state = initialState(first.number, course.stages.at(-1)!.number)
let watcher = watchFolder(first.number)
let settle: NodeJS.Timeout | undefined

function dispatch(event: WatchEvent) {
  const next = step(state, event)
  state = next.state
  for (const effect of next.effects) perform(effect)
}

function perform(effect: Effect) {
  switch (effect.type) {
    case 'grade':
      void regrade(effect.stage, effect.all, effect.reason)
      return
    case 'hint':
      printHints(revealNext(stageByNumber(effect.stage), lang))
      return
    case 'watch':
      clearTimeout(settle)
      watcher.close()
      watcher = watchFolder(effect.stage)
      return
    case 'lastStage':
      console.log(chalk.bold(t(lang, 'watch.lastStage', { number: effect.stage })))
      return
    case 'queued':
      console.log(chalk.dim(t(lang, 'watch.queued', { key: effect.command[0]! })))
      return
    case 'quit':
      quit(0)
      return
    case 'interrupt':
      // Raw mode turned the terminal's Ctrl-C into a key: the signal it would have sent.
      process.kill(process.pid, 'SIGINT')
      return
  }
}

async function regrade(number: number, all: boolean, reason: Line) {
  // Interrupted: processes.ts stops the grade's servers and exits (130 or 143); the cut grade ends in InterruptedError, which it swallows.
  if (interrupted()) return
  const stage = stageByNumber(number)
  const folder = folderOf(number)
  // A terminal gets a clean screen; a log or a pipe gets a ruler instead of escape codes.
  if (process.stdout.isTTY) process.stdout.write('\x1b[2J\x1b[3J\x1b[H')
  else console.log(chalk.dim(`\n──── ${say(lang, reason)} ────`))
  const seed = values.seed !== undefined ? Number(values.seed) : newSeed()
  printHeader(stage, seed, folder, lang)
  const result = await grade({
    stage: stage.number,
    seed,
    source,
    stopAtFirstFailure: !(values.all || all),
    onCheckStart: stageHeadings(stage.number, lang),
    onDatabaseStart: (s) => printDatabaseStart(s, lang),
    onCheckEnd: (r) => printCheck(r, lang),
  })
  if (interrupted()) return
  // Stopped at a failure, it still judges the stage: its own checks run first (progressRecord.ts).
  recordGrade(result, { source, partial: false, server: false })
  printSummary(result, lang)
  // Only a run that stopped at a failure left checks out; a green one ran them all.
  const skipped = planned(stage.number) - result.checks.length
  if (!result.passed && skipped > 0) console.log(chalk.dim(t(lang, 'watch.stopped', { count: skipped })))
  console.log(chalk.bold(nextStep(result, { partial: false }, undefined, lang)))
  console.log(chalk.dim(t(lang, 'watch.watching', { folder })))
  if (keys) console.log(chalk.dim(t(lang, 'watch.keys')))
  dispatch({ type: 'ended' })
}

function watchFolder(number: number): FSWatcher {
  return watch(folderOf(number), (_event, file) => {
    if (file && !/\.(?:[cm]?[jt]s|json|sql)$/.test(file)) return // editor swap and backup files
    clearTimeout(settle)
    settle = setTimeout(() => dispatch({ type: 'saved', file }), SETTLE_MS)
  })
}

/** On a terminal, each key is read as it is pressed (raw mode), and the terminal is given back as it was on the way out. Elsewhere: no keys. */
function listenToKeys(): boolean {
  const stdin = process.stdin
  if (!stdin.isTTY) return false
  emitKeypressEvents(stdin)
  stdin.setRawMode(true)
  process.on('exit', () => stdin.setRawMode(false))
  stdin.on('keypress', (_text: string | undefined, key) => {
    const command = commandOf(key)
    if (command) dispatch({ type: 'key', command })
  })
  stdin.resume()
  return true
}

dispatch({ type: 'start' })
