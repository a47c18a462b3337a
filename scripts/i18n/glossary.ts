// docs/glossary.md, the one list of the course's terms and their chosen
// translations, read for the test that holds the translations to it: its
// first table, the terms, and its second, the forms a translation must never
// use (calques that read wrong to a native reader).
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { repoRoot } from '#harness/paths.ts'
import { LANGUAGES, type Language } from '#harness/i18n/stamp.ts'

export type GlossaryTerm = Record<'english' | Language, string[]> & {
  /** Marked ★: a term of the course's own argument, checked in every section that uses it. */
  core: boolean
  gloss: string
}

/** A form no translation into `language` may contain, anywhere (prose, code comments, the grader's pack). */
export type ForbiddenForm = {
  language: Language
  /** The forms, each matched as a substring. */
  forbidden: string[]
  /** What to write instead, as the glossary words it. */
  instead: string
  why: string
}

export const GLOSSARY = 'docs/glossary.md'

/** The rows of the Markdown table whose header row starts with `header` (its cells trimmed); [] when there is none. */
function tableRows(markdown: string, header: string): string[][] {
  const lines = markdown.split('\n')
  const start = lines.findIndex((line) => line.startsWith(header))
  if (start < 0) return []
  const rows: string[][] = []
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith('|')) break
    if (/^\|[\s|:-]+\|$/.test(line)) continue
    rows.push(
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    )
  }
  return rows
}

/** A cell's forms, separated by " / ". */
const forms = (cell: string) => cell.split(' / ').map((form) => form.replace('★', '').trim())

/** The glossary table's rows (the table headed `| English |`). */
export function parseGlossary(markdown: string): GlossaryTerm[] {
  return tableRows(markdown, '| English |').map(([english = '', zh = '', ko = '', gloss = '']) => ({
    english: forms(english),
    'zh-CN': forms(zh),
    ko: forms(ko),
    core: english.includes('★'),
    gloss,
  }))
}

/** The forbidden-forms table's rows (the table headed `| Language | Forbidden |`); a row naming no course language throws. */
export function parseForbiddenForms(markdown: string): ForbiddenForm[] {
  return tableRows(markdown, '| Language | Forbidden |').map(([language = '', forbidden = '', instead = '', why = '']) => {
    if (!(LANGUAGES as readonly string[]).includes(language))
      throw new Error(`${GLOSSARY}: forbidden form for "${language}", not one of ${LANGUAGES.join(', ')}`)
    return { language: language as Language, forbidden: forms(forbidden), instead, why }
  })
}

const glossaryText = () => readFileSync(resolve(repoRoot, GLOSSARY), 'utf8')
export const readGlossary = () => parseGlossary(glossaryText())
export const readForbiddenForms = () => parseForbiddenForms(glossaryText())
