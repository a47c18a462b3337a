// What is left to translate, per language: every section of the learner path
// not translated yet or behind its English, every translated file missing,
// every item of the grader's pack missing or behind its English, each with
// the command that records it once translated; and each language's coverage.
// npm run i18n:status prints it (scripts/i18n/cli.ts). A pure function of
// the texts, so that a test can feed it altered copies.
import { LANGUAGES, type Language } from '#harness/i18n/stamp.ts'
import { splitSections } from './markdownSections.ts'
import type { PackStatus } from './packStatus.ts'
import { headingCount, staleSections } from './translationChecks.ts'
import { pairOf, translatable, translationPath } from './translations.ts'

/** One thing to translate. */
export type Todo = {
  language: Language
  /** `README.zh-CN.md § Start`, `stages/03-in-progress/README.ko.md`, `i18n/ko.json check key-required`. */
  what: string
  /** Why it is listed: not translated, or out of date (and since which stamp). */
  why: string
  /** The command to run once it is translated. */
  command: string
  /** The English to translate, for a pack item (the sections' English is their file). */
  english?: string
}

export type Coverage = {
  language: Language
  sections: { current: number; total: number }
  packItems: { current: number; total: number }
}

export type Listing = {
  todo: Todo[]
  /** Translations whose headings no longer match their English, and broken pack items: npm test fails on these. */
  broken: string[]
  coverage: Coverage[]
}

/** An English text of the learner path, with its translations (a language missing: not translated yet). */
export type Texts = { english: string; englishText: string; translations: Partial<Record<Language, string>> }

export function listTodo(texts: readonly Texts[], packs: readonly PackStatus[], languages: readonly Language[] = LANGUAGES): Listing {
  const todo: Todo[] = []
  const broken: string[] = []
  const coverage = languages.map((language): Coverage => {
    let current = 0
    let total = 0
    for (const { english, englishText, translations } of texts) {
      const sections = splitSections(englishText).filter(translatable).length
      total += sections
      const translated = translations[language]
      const file = translationPath(english, language)
      if (translated === undefined) {
        todo.push({ language, what: file, why: `not translated (${sections} sections)`, command: `npm run i18n:stamp -- ${file} --all` })
        continue
      }
      const pair = pairOf(english, language, englishText, translated)
      if (pair.source.length !== pair.translation.length) {
        broken.push(headingCount(pair))
        continue
      }
      const stale = staleSections(pair)
      current += sections - stale.length
      for (const s of stale)
        todo.push({
          language,
          what: `${file} § ${s.heading}`,
          why: s.recorded === undefined ? 'not translated (no stamp)' : `out of date: the English changed since (stamp ${s.recorded}, now ${s.current})`,
          command: `npm run i18n:stamp -- ${file} --section ${s.index}`,
        })
    }
    const pack = packs.find((p) => p.language === language)
    for (const item of pack?.todo ?? [])
      todo.push({
        language,
        what: `i18n/${language}.json ${item.kind} ${item.id}`,
        why: item.state,
        command: `npm run i18n:stamp-pack -- ${language} ${item.kind} ${item.id}`,
        english: item.english,
      })
    if (pack) broken.push(...pack.broken)
    const items = pack?.items ?? 0
    return { language, sections: { current, total }, packItems: { current: items - (pack?.todo.length ?? 0), total: items } }
  })
  return { todo, broken, coverage }
}

/** npm run i18n:status's exit status: 0 when there is nothing to translate and nothing broken, else 1; 0 either way with --warn (CI's report). */
export const statusExitCode = ({ todo, broken }: Listing, warn: boolean): number => (warn || (todo.length === 0 && broken.length === 0) ? 0 : 1)

const percent = ({ current, total }: { current: number; total: number }) =>
  `${current}/${total} (${total === 0 ? '100.0' : ((100 * current) / total).toFixed(1)}%)`
const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`
/** A pack item's English on one line, cut at 100 characters. */
const excerpt = (english: string) => {
  const flat = JSON.stringify(english)
  return flat.length > 100 ? `${flat.slice(0, 99)}…` : flat
}

/** The listing as npm run i18n:status prints it: per language, what to translate and the command after it; then what npm test fails on. */
export function renderTodo({ todo, broken, coverage }: Listing): string {
  const lines: string[] = []
  for (const c of coverage) {
    const mine = todo.filter((t) => t.language === c.language)
    const sections = mine.filter((t) => t.english === undefined).length
    const items = mine.length - sections
    lines.push(
      mine.length === 0
        ? `${c.language}: nothing to translate`
        : `${c.language}: ${mine.length} to translate (${sections} in the learner path, ${items} in the grader's pack)`,
    )
    for (const t of mine) {
      lines.push(`  ${t.what}: ${t.why}`)
      if (t.english !== undefined) lines.push(`    English: ${excerpt(t.english)}`)
      lines.push(`    then: ${t.command}`)
    }
    lines.push(`  current: ${percent(c.sections)} sections of the learner path, ${percent(c.packItems)} items of the grader's pack`)
  }
  if (broken.length > 0) lines.push('', 'broken (npm test fails on these):', ...broken.map((b) => `  ${b}`))
  lines.push(
    '',
    todo.length === 0
      ? `nothing to translate in ${coverage.map((c) => c.language).join(', ')}`
      : `${plural(todo.length, 'thing')} to translate: translate each, then run the command under it (CONTRIBUTING.md, "Translations"); until then the English is shown for a pack item, and the older translation for a section`,
  )
  return lines.join('\n')
}
