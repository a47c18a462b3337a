// docs/glossary.md, the one list of the course's terms and their chosen
// translations, read for the test that holds the translations to it.
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { repoRoot } from '../paths.ts'
import type { Language } from './stamp.ts'

export type GlossaryTerm = Record<'english' | Language, string[]> & {
  /** Marked ★: a term of the course's own argument, checked in every section that uses it. */
  core: boolean
  gloss: string
}

export const GLOSSARY = 'docs/glossary.md'

/** The glossary table's rows; a cell's forms are separated by " / ". */
export function parseGlossary(markdown: string): GlossaryTerm[] {
  const rows = markdown.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| English |'))
  return rows.map((row) => {
    const [english, zh, ko, gloss] = row
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim()) as [string, string, string, string]
    const forms = (cell: string) => cell.split(' / ').map((form) => form.replace('★', '').trim())
    return { english: forms(english), 'zh-CN': forms(zh), ko: forms(ko), core: english.includes('★'), gloss }
  })
}

export const readGlossary = () => parseGlossary(readFileSync(resolve(repoRoot, GLOSSARY), 'utf8'))
