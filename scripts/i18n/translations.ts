// Where the course's translations live and how one records its source: a
// translation sits beside its English file (`README.md` → `README.zh-CN.md`),
// has the same sections, and under each heading one line
// `<!-- source: <stamp> --><a id="<English slug>"></a>` naming the version of
// the English section it translates (the anchor keeps English fragment links
// working). Both files open with a language line linking the others.
import { existsSync, readFileSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { course } from '#harness/course.ts'
import { repoRoot } from '#harness/paths.ts'
import { type Section, slugs, splitSections } from './markdownSections.ts'
import { LANGUAGES, type Language, stampOf } from '#harness/i18n/stamp.ts'

const NAMES: Record<Language | 'en', string> = { en: 'English', 'zh-CN': '简体中文', ko: '한국어' }

/** The learner path, which is translated whole: README, LESSONS, CONTRACT and every stage README (paths from the repository root). */
export function learnerTexts(): string[] {
  return ['README.md', 'LESSONS.md', 'CONTRACT.md', ...course.stages.map((s) => `stages/${s.folder}/README.md`)]
}

export function translationPath(english: string, language: Language): string {
  return english.replace(/\.md$/, `.${language}.md`)
}

/** The English file a translation translates, and its language; undefined for an English file. */
export function sourceOf(translated: string): { english: string; language: Language } | undefined {
  for (const language of LANGUAGES) if (translated.endsWith(`.${language}.md`)) return { english: translated.replace(`.${language}.md`, '.md'), language }
  return undefined
}

const read = (path: string) => readFileSync(resolve(repoRoot, path), 'utf8')
export const exists = (path: string) => existsSync(resolve(repoRoot, path))

/** `English · [简体中文](README.zh-CN.md) · [한국어](README.ko.md)`: every existing version of the file, the current one not linked. */
export function languageLine(english: string, current: Language | 'en'): string {
  const versions = (['en', ...LANGUAGES] as const).filter((l) => l === 'en' || exists(translationPath(english, l)))
  const file = (l: Language | 'en') => basename(l === 'en' ? english : translationPath(english, l))
  return versions.map((l) => (l === current ? NAMES[l] : `[${NAMES[l]}](${file(l)})`)).join(' · ')
}

const isLanguageLine = (line: string | undefined) => line !== undefined && /^(English|\[English\]\([^)]*\)) · /.test(line)

/** Section 0 without its language line (and the blank line after it): the language line is navigation, not text to translate. */
function withoutLanguageLine(lines: string[]): string[] {
  if (!isLanguageLine(lines[0])) return lines
  return lines.slice(lines[1]?.trim() === '' ? 2 : 1)
}

/** The text of an English section a translation must translate, as stamped. */
export function sourceText(section: Section): string {
  return (section.index === 0 ? withoutLanguageLine(section.lines) : section.lines).join('\n')
}

/** Section 0 holds nothing to translate when it is only the language line. */
export const translatable = (section: Section) => sourceText(section).trim() !== ''

const STAMP_LINE = /^<!-- source: ([0-9a-f]{8}) -->(?:<a id="([^"]*)"><\/a>)?$/

export type TranslatedSection = Section & {
  /** The stamp recorded under the heading, if any. */
  stamp?: string
  anchor?: string
  /** The section's lines without its language line and stamp line: what is compared with the English. */
  text: string[]
}

/** A translation's sections, each with the stamp it records. */
export function parseTranslation(markdown: string): TranslatedSection[] {
  return splitSections(markdown).map((section) => {
    const [head, rest] = section.index === 0 ? [[], withoutLanguageLine(section.lines)] : [section.lines.slice(0, 1), section.lines.slice(1)]
    const stamp = STAMP_LINE.exec(rest[0] ?? '')
    if (!stamp) return { ...section, text: [...head, ...rest] }
    return { ...section, stamp: stamp[1], anchor: stamp[2], text: [...head, ...rest.slice(1)] }
  })
}

export type Pair = { english: string; translated: string; language: Language; source: Section[]; translation: TranslatedSection[] }

/** An English file and its translation into `language`, read from the checkout; undefined when that translation does not exist. */
export function loadPair(english: string, language: Language): Pair | undefined {
  const translated = translationPath(english, language)
  return exists(translated) ? pairOf(english, language, read(english), read(translated)) : undefined
}

/** The pair of these two texts, as if they were the files (a test feeds it altered copies). */
export function pairOf(english: string, language: Language, englishText: string, translatedText: string): Pair {
  return {
    english,
    translated: translationPath(english, language),
    language,
    source: splitSections(englishText),
    translation: parseTranslation(translatedText),
  }
}

/**
 * The translation with its language line and the stamp lines of the chosen
 * sections (all, or one) rewritten from the current English: what a
 * maintainer runs after bringing a translation up to date.
 */
export function stampTranslation(englishText: string, translatedText: string, english: string, language: Language, which: number | 'all'): string {
  const source = splitSections(englishText)
  const translation = parseTranslation(translatedText)
  if (source.length !== translation.length)
    throw new Error(`the translation has ${translation.length - 1} headings and the English ${source.length - 1}: make the headings match first`)
  if (which !== 'all' && !source[which]) throw new Error(`no section ${which}: sections are 0–${source.length - 1}`)
  const anchors = slugs(source)
  const lines = translation.flatMap((t, i) => {
    const stamped = which === 'all' || which === i
    const stamp = stamped ? stampOf(sourceText(source[i]!)) : t.stamp
    const line = i === 0 ? `<!-- source: ${stamp} -->` : `<!-- source: ${stamp} --><a id="${stamped ? anchors[i] : t.anchor}"></a>`
    const record = stamp === undefined || (i === 0 && !translatable(source[0]!)) ? [] : [line]
    if (i === 0) return [languageLine(english, language), '', ...record, ...t.text]
    return [t.text[0]!, ...record, ...t.text.slice(1)]
  })
  return lines.join('\n')
}

/** A link in a translation may point to the same-language translation of a translated English file (`LESSONS.zh-CN.md#x`): read it as the English link it stands for. */
export function asEnglishLink(target: string, language: Language, from: string): string {
  const english = target.replace(new RegExp(`^([^#?]*)\\.${language.replace('-', '\\-')}\\.md(?=#|$)`), '$1.md')
  return english !== target && learnerTexts().includes(linkedFile(from, english)) ? english : target
}

/** The file a relative link in `from` points to, from the repository root ('' for an external link). */
export function linkedFile(from: string, target: string): string {
  const path = target.split('#')[0]!
  if (/^[a-z]+:/i.test(target)) return ''
  return path === '' ? from : join(dirname(from), path)
}
