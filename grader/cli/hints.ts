// A stage's hints (course.json), revealed one at a time: each reveal shows the
// hints already seen plus one more and remembers the count in .lab/hints.json,
// so a learner asks for exactly as much help as they need; in the learner's
// language when the pack has the stage. npm run hint and watch's h key both
// reveal through here.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import chalk from 'chalk'
import { z } from 'zod'
import type { Stage } from '#harness/course.ts'
import type { Lang } from '#harness/i18n/language.ts'
import { t } from '#harness/i18n/messages.ts'
import { stageText } from '#harness/i18n/packs.ts'
import { labFile } from '#harness/labHome.ts'

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
export function revealNext(stage: Stage, lang: Lang): string[] {
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

export function resetHints(stage: Stage) {
  const shown = readShown()
  delete shown[stage.slug]
  writeShown(shown)
}

/** Prints what revealNext returned: the title bold, the hints yellow, the line after them dim. */
export function printHints([title, ...rest]: string[]) {
  console.log(chalk.bold(title))
  for (const line of rest) console.log(line.startsWith('  ') ? chalk.yellow(line) : chalk.dim(line))
}
