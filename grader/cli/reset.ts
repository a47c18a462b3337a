// npm run reset -- <stage> [--yes] [--lang L]
// Puts back the starter of the files a learner edits in a stage's folder
// (starterRestore.ts says which files and where the starters come from): it
// lists the files that differ from their starter, asks on a terminal (y/N),
// and overwrites them. Without a terminal it restores only with --yes, and
// otherwise refuses in one line. Nothing outside stages/<folder> is touched.
import { createInterface } from 'node:readline/promises'
import chalk from 'chalk'
import { languageOfCommandLine, languageOrExit, parseArgsOrExit } from '#harness/cliArgs.ts'
import { say } from '#harness/i18n/phrase.ts'
import { unknownStage } from './usageErrors.ts'
import { findStage, UnknownStageError } from '#harness/course.ts'
import { type Lang, rememberLangFlag } from '#harness/i18n/language.ts'
import { t } from '#harness/i18n/messages.ts'
import { RESET_USAGE, usageText } from './usage.ts'
import { repoRoot } from '#harness/paths.ts'
import { applyReset, planReset, ResetError, type ResetProblem } from './starterRestore.ts'

/** The usage, in the command line's language (grader/cli/usage.ts). */
const usage = (lang: Lang = languageOfCommandLine()) => usageText(RESET_USAGE, lang)

function problemLine(problem: ResetProblem, number: number, lang: Lang): string {
  if (problem.kind === 'noHistory') return t(lang, 'reset.noHistory', { number, error: problem.error })
  if (problem.kind === 'notInHistory') return t(lang, 'reset.notInHistory', { path: problem.path })
  return t(lang, 'reset.link', { number, path: problem.path })
}

/** The learner's answer to `question` on the terminal; Ctrl-C answers no. */
async function ask(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stdout })
  try {
    return await new Promise<string>((done) => {
      rl.once('SIGINT', () => {
        process.stdout.write('\n')
        done('')
      })
      rl.question(question).then(done, () => done(''))
    })
  } finally {
    rl.close()
  }
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgsOrExit(usage, {
    allowPositionals: true,
    options: { yes: { type: 'boolean', short: 'y', default: false }, lang: { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } },
  })
  if (values.help || positionals.length !== 1) {
    console[values.help ? 'log' : 'error'](usage())
    return values.help ? 0 : 2
  }
  const stage = findStage(positionals[0]!)
  const lang = languageOrExit(values.lang)
  rememberLangFlag(values.lang, lang)
  const where = { number: stage.number, slug: stage.slug, folder: `stages/${stage.folder}` }
  let plan: ReturnType<typeof planReset>
  try {
    plan = planReset(stage, repoRoot)
  } catch (error) {
    if (!(error instanceof ResetError)) throw error
    console.error(chalk.red(problemLine(error.problem, stage.number, lang)))
    return 1
  }
  const differ = plan.files.filter((f) => f.state !== 'same')
  const same = plan.files.filter((f) => f.state === 'same')
  if (differ.length === 0) {
    console.log(t(lang, 'reset.nothing', where))
    return 0
  }
  if (!values.yes && !process.stdin.isTTY) {
    console.error(chalk.red(t(lang, 'reset.needsYes', { number: stage.number, files: differ.map((f) => f.path).join(', ') })))
    return 2
  }
  console.log(chalk.bold(t(lang, 'reset.overwrite', where)))
  for (const file of differ) console.log(`  ${file.state === 'missing' ? t(lang, 'reset.missing', { path: file.path }) : file.path}`)
  if (same.length) console.log(chalk.dim(t(lang, 'reset.same', { files: same.map((f) => f.path).join(', ') })))
  if (!values.yes && !/^y(es)?$/i.test((await ask(t(lang, 'reset.confirm'))).trim())) {
    console.log(t(lang, 'reset.declined'))
    return 1
  }
  const written = applyReset(plan, repoRoot)
  console.log(chalk.green(t(lang, 'reset.done', { number: stage.number, count: written.length })))
  return 0
}

main().then(
  (code) => {
    process.exitCode = code
  },
  (error) => {
    console.error(
      chalk.red(error instanceof UnknownStageError ? say(languageOfCommandLine(), unknownStage(error)) : `npm run reset failed: ${(error as Error).message}`),
    )
    if (error instanceof UnknownStageError) console.error(usage())
    process.exitCode = error instanceof UnknownStageError ? 2 : 1
  },
)
