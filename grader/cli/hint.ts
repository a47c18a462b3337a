// npm run hint -- <stage> [--reset] [--lang L]
// Reveals a stage's hints (course.json) one at a time: each call shows the
// hints already seen plus one more, and remembers the count in .lab/hints.json
// (hints.ts, which watch's h key shares), in the learner's language (--lang,
// harness/i18n/language.ts) when the pack has the stage.
import chalk from 'chalk'
import { languageOfCommandLine, languageOrExit, parseArgsOrExit } from '#harness/cliArgs.ts'
import { say } from '#harness/i18n/phrase.ts'
import { unknownStage } from './usageErrors.ts'
import { findStage, UnknownStageError } from '#harness/course.ts'
import { type Lang, rememberLangFlag } from '#harness/i18n/language.ts'
import { t } from '#harness/i18n/messages.ts'
import { HINT_USAGE, usageText } from './usage.ts'
import { printHints, resetHints, revealNext } from './hints.ts'

/** The usage, in the command line's language (grader/cli/usage.ts). */
const usage = (lang: Lang = languageOfCommandLine()) => usageText(HINT_USAGE, lang)

function main(): number {
  const { values, positionals } = parseArgsOrExit(usage, {
    allowPositionals: true,
    options: { reset: { type: 'boolean', default: false }, lang: { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } },
  })
  if (values.help || positionals.length !== 1) {
    console[values.help ? 'log' : 'error'](usage())
    return values.help ? 0 : 2
  }
  const stage = findStage(positionals[0]!)
  const lang = languageOrExit(values.lang)
  rememberLangFlag(values.lang, lang)
  if (values.reset) {
    resetHints(stage)
    console.log(t(lang, 'hint.reset', { number: stage.number }))
    return 0
  }
  printHints(revealNext(stage, lang))
  return 0
}

try {
  process.exitCode = main()
} catch (error) {
  console.error(chalk.red(error instanceof UnknownStageError ? say(languageOfCommandLine(), unknownStage(error)) : (error as Error).message))
  process.exitCode = error instanceof UnknownStageError ? 2 : 1
}
