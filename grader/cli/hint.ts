// npm run hint -- <stage> [--reset] [--lang L]
// Reveals a stage's hints (course.json) one at a time: each call shows the
// hints already seen plus one more, and remembers the count in .lab/hints.json,
// so a learner asks for exactly as much help as they need; in the learner's
// language (--lang, harness/i18n/language.ts) when the pack has the stage.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import chalk from 'chalk'
import { z } from 'zod'
import { languageOrExit, parseArgsOrExit } from '#harness/cliArgs.ts'
import { findStage, UnknownStageError, type Stage } from '#harness/course.ts'
import type { Lang } from '#harness/i18n/language.ts'
import { t } from '#harness/i18n/messages.ts'
import { stageText } from '#harness/i18n/packs.ts'
import { labFile } from '#harness/labHome.ts'

const USAGE = `usage: npm run hint -- <stage> [--reset] [--lang L]

  <stage>   0, stage0, or a slug such as unique-key: shows its hints seen so far, and one more
  --reset   hide the stage's hints again
  --lang L  the language of the hints: en, zh-CN or ko (as npm run grade -- --help says)`

/** Where the count lives; LAB_HOME moves it (the tests use a folder of their own). */
const stateFile = () => labFile('hints.json')

const Shown = z.record(z.string(), z.number().int().min(0))

function readShown(): Record<string, number> {
  try {
    return Shown.parse(JSON.parse(readFileSync(stateFile(), 'utf8')))
  } catch {
    return {} // no file yet, or one we cannot read: start from no hints shown
  }
}

function writeShown(shown: Record<string, number>) {
  mkdirSync(dirname(stateFile()), { recursive: true })
  writeFileSync(stateFile(), `${JSON.stringify(shown, null, 2)}\n`)
}

/** Shows one more hint of `stage` (or all of them once all are out) and returns the lines printed. */
function revealNext(stage: Stage, lang: Lang): string[] {
  const shown = readShown()
  const before = shown[stage.slug] ?? 0
  const count = Math.min(before + 1, stage.hints.length)
  writeShown({ ...shown, [stage.slug]: count })
  const { title, hints } = stageText(lang, stage)
  const lines = [t(lang, 'hint.title', { number: stage.number, title, count, total: hints.length })]
  hints.slice(0, count).forEach((hint, i) => lines.push(`  ${i + 1}. ${hint}`))
  lines.push(count < hints.length ? t(lang, 'hint.next', { number: stage.number, following: count + 1 }) : t(lang, 'hint.last', { folder: stage.folder }))
  return lines
}

function resetHints(stage: Stage) {
  const shown = readShown()
  delete shown[stage.slug]
  writeShown(shown)
}

function main(): number {
  const { values, positionals } = parseArgsOrExit(USAGE, {
    allowPositionals: true,
    options: { reset: { type: 'boolean', default: false }, lang: { type: 'string' } },
  })
  if (positionals.length !== 1) {
    console.error(USAGE)
    return 2
  }
  const stage = findStage(positionals[0]!)
  const lang = languageOrExit(USAGE, values.lang)
  if (values.reset) {
    resetHints(stage)
    console.log(t(lang, 'hint.reset', { number: stage.number }))
    return 0
  }
  const [title, ...rest] = revealNext(stage, lang)
  console.log(chalk.bold(title))
  for (const line of rest) console.log(line.startsWith('  ') ? chalk.yellow(line) : chalk.dim(line))
  return 0
}

try {
  process.exitCode = main()
} catch (error) {
  console.error(chalk.red((error as Error).message))
  process.exitCode = error instanceof UnknownStageError ? 2 : 1
}
