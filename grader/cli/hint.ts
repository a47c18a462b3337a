// npm run hint -- <stage> [--reset]
// Reveals a stage's hints (course.json) one at a time: each call shows the
// hints already seen plus one more, and remembers the count in .lab/hints.json,
// so a learner asks for exactly as much help as they need.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import chalk from 'chalk'
import { z } from 'zod'
import { parseArgsOrExit } from '#harness/cliArgs.ts'
import { findStage, UnknownStageError, type Stage } from '#harness/course.ts'
import { repoRoot } from '#harness/paths.ts'

const USAGE = `usage: npm run hint -- <stage> [--reset]

  <stage>   0, stage0, or a slug such as unique-key: shows its hints seen so far, and one more
  --reset   hide the stage's hints again`

/** Where the count lives; LAB_HOME moves it (the tests use a folder of their own). */
const stateFile = () => resolve(process.env.LAB_HOME ?? resolve(repoRoot, '.lab'), 'hints.json')

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
function revealNext(stage: Stage): string[] {
  const shown = readShown()
  const before = shown[stage.slug] ?? 0
  const count = Math.min(before + 1, stage.hints.length)
  writeShown({ ...shown, [stage.slug]: count })
  const lines = [`Stage ${stage.number} · ${stage.title}: hint ${count} of ${stage.hints.length}`]
  stage.hints.slice(0, count).forEach((hint, i) => lines.push(`  ${i + 1}. ${hint}`))
  lines.push(
    count < stage.hints.length
      ? `next: npm run hint -- ${stage.number} shows hint ${count + 1}`
      : `that was the last hint; solutions/${stage.folder}/ holds the reference answer`,
  )
  return lines
}

function resetHints(stage: Stage) {
  const shown = readShown()
  delete shown[stage.slug]
  writeShown(shown)
}

function main(): number {
  const { values, positionals } = parseArgsOrExit(USAGE, { allowPositionals: true, options: { reset: { type: 'boolean', default: false } } })
  if (positionals.length !== 1) {
    console.error(USAGE)
    return 2
  }
  const stage = findStage(positionals[0]!)
  if (values.reset) {
    resetHints(stage)
    console.log(`stage ${stage.number}: hints hidden again`)
    return 0
  }
  const [title, ...rest] = revealNext(stage)
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
