// npm run i18n:status [-- --warn]
// npm run i18n:stamp -- <translated file> (--section N | --all)
//
// status: what is left to translate, per language (scripts/i18n/todo.ts):
// every section of the learner path not translated yet or behind its
// English, every translated file missing, every item of the grader's
// language packs (i18n/<lang>.json) missing or behind its English, each with
// the command that records it once translated; then each language's
// coverage, and what npm test fails on (a translation whose headings no
// longer match its English, a broken pack item). Exit 0 when there is
// nothing to do, 1 otherwise; with --warn (CI's report), 0 either way.
// Nothing it lists as to translate fails npm test (CONTRIBUTING.md,
// "Translations"). A pack item is stamped with npm run i18n:stamp-pack.
//
// stamp: after updating a translation, rewrites its language line and the
// stamp line under the chosen headings from the current English, which
// records that those sections translate it as it is now. `--all` stamps
// every section: for a new translation, or a draft copied in whole.
import { readFileSync, writeFileSync } from 'node:fs'
import { relative, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { checksFor } from '#grader/checks/index.ts'
import { course } from '#harness/course.ts'
import { pack } from '#harness/i18n/packs.ts'
import { LANGUAGES } from '#harness/i18n/stamp.ts'
import { repoRoot } from '#harness/paths.ts'
import { packStatus } from './packStatus.ts'
import { type Listing, listTodo, renderTodo, statusExitCode } from './todo.ts'
import { exists, learnerTexts, sourceOf, stampTranslation, translationPath } from './translations.ts'

const read = (path: string) => readFileSync(resolve(repoRoot, path), 'utf8')

const USAGE = 'usage: npm run i18n:status [-- --warn]\n       npm run i18n:stamp -- <translated file> (--section N | --all)'

/** The learner path's English texts and their translations, and each language's pack, as they are in the checkout. */
function listing(): Listing {
  const texts = learnerTexts().map((english) => ({
    english,
    englishText: read(english),
    translations: Object.fromEntries(LANGUAGES.flatMap((l) => (exists(translationPath(english, l)) ? [[l, read(translationPath(english, l))]] : []))),
  }))
  const checks = course.stages.flatMap((s) => checksFor(s.number))
  return listTodo(
    texts,
    LANGUAGES.map((language) => packStatus(language, pack(language), { stages: course.stages, checks })),
  )
}

function status(args: string[]): number {
  const { values } = parseArgs({ args, options: { warn: { type: 'boolean', default: false } } })
  const list = listing()
  console.log(renderTodo(list))
  return statusExitCode(list, values.warn)
}

function stamp(args: string[]): number {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { section: { type: 'string' }, all: { type: 'boolean', default: false } },
  })
  // npm runs a script in the repository root; INIT_CWD is where the maintainer typed the path.
  const file = positionals.length === 1 ? relative(repoRoot, resolve(process.env.INIT_CWD ?? process.cwd(), positionals[0]!)) : undefined
  const source = file === undefined ? undefined : sourceOf(file)
  const section = values.section === undefined ? undefined : Number(values.section)
  if (!file || !source || values.all === (section !== undefined) || (section !== undefined && !Number.isInteger(section))) {
    console.error(file && !source ? `${file} is not a translation (NAME.<${LANGUAGES.join('|')}>.md)\n${USAGE}` : USAGE)
    return 2
  }
  try {
    writeFileSync(resolve(repoRoot, file), stampTranslation(read(source.english), read(file), source.english, source.language, section ?? 'all'))
  } catch (error) {
    console.error(`${file}: ${(error as Error).message}`)
    return 1
  }
  console.log(`stamped ${file} ${section === undefined ? '(every section)' : `section ${section}`} from ${source.english}`)
  return 0
}

const [command, ...rest] = process.argv.slice(2)
try {
  if (command === 'status') process.exitCode = status(rest)
  else if (command === 'stamp') process.exitCode = stamp(rest)
  else {
    console.error(USAGE)
    process.exitCode = 2
  }
} catch (error) {
  // A malformed command line (an unknown option) is the user's mistake: the usage, not a stack trace.
  if (!(error instanceof TypeError && 'code' in error)) throw error
  console.error(`${error.message}\n${USAGE}`)
  process.exitCode = 2
}
