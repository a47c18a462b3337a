// npm run i18n:status
// npm run i18n:stamp -- <translated file> (--section N | --all)
//
// status: every translated section whose English changed since it was
// translated (file, section, recorded and current stamp), every English file
// or section of the learner path without a translation, and per language how
// many sections are translated and current; then what the grader's language
// packs (i18n/<lang>.json) lack or have out of date. Exit 1 when a section or
// a pack item is out of date, or a translation's headings no longer match
// its English. (A pack item is stamped with npm run i18n:stamp-pack.)
//
// stamp: after updating a translation, rewrites its language line and the
// stamp line under the chosen headings from the current English, which
// records that those sections translate it as it is now. `--all` stamps
// every section: for a new translation, or a draft copied in whole.
import { readFileSync, writeFileSync } from 'node:fs'
import { relative, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { course } from '#harness/course.ts'
import { packProblems } from './packStatus.ts'
import { LANGUAGES } from '#harness/i18n/stamp.ts'
import { freshnessDifferences, staleSections } from './translationChecks.ts'
import { learnerTexts, loadPair, sourceOf, stampTranslation, translatable, translationPath } from './translations.ts'
import { splitSections } from './markdownSections.ts'
import { repoRoot } from '#harness/paths.ts'
import { checksFor } from '#grader/checks/index.ts'

const USAGE = 'usage: npm run i18n:status\n       npm run i18n:stamp -- <translated file> (--section N | --all)'

function status(): number {
  let failed = false
  const outOfDate: string[] = []
  const untranslated: string[] = []
  const coverage: string[] = []
  for (const language of LANGUAGES) {
    let current = 0
    let total = 0
    for (const english of learnerTexts()) {
      const sections = splitSections(readFileSync(resolve(repoRoot, english), 'utf8')).filter(translatable)
      total += sections.length
      const pair = loadPair(english, language)
      if (!pair) {
        untranslated.push(`${translationPath(english, language)}: missing (${sections.length} sections)`)
        continue
      }
      if (pair.source.length !== pair.translation.length) {
        failed = true
        outOfDate.push(...freshnessDifferences(pair))
        continue
      }
      const stale = staleSections(pair)
      current += sections.length - stale.length
      for (const s of stale) {
        const at = `${pair.translated} § ${s.heading} (--section ${s.index})`
        if (s.recorded === undefined) untranslated.push(`${at}: no stamp`)
        else {
          failed = true
          outOfDate.push(`${at}: stamp ${s.recorded}, now ${s.current}`)
        }
      }
    }
    coverage.push(`${language.padEnd(6)} ${current}/${total} sections translated and current (${((100 * current) / total).toFixed(1)}%)`)
  }
  const checks = course.stages.flatMap((s) => checksFor(s.number))
  const packs = LANGUAGES.flatMap((language) => packProblems(language, course, checks))
  const list = (title: string, lines: string[]) => (lines.length === 0 ? [] : [`${title}:`, ...lines.map((l) => `  ${l}`), ''])
  console.log(
    [
      ...list('out of date', outOfDate),
      ...list('not translated', untranslated),
      'coverage of the learner path:',
      ...coverage,
      '',
      packs.length ? list("the grader's language packs", packs).join('\n') : `the grader's language packs (${LANGUAGES.join(', ')}): complete and current`,
    ].join('\n'),
  )
  return failed || packs.length > 0 ? 1 : 0
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
  const read = (path: string) => readFileSync(resolve(repoRoot, path), 'utf8')
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
  if (command === 'status') process.exitCode = status()
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
