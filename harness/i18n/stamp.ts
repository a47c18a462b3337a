// Which version of its English source a translation translates. A stamp is a
// short hash of the English text; a translation records the stamp of what it
// translated, and a stamp that no longer matches means the English changed
// since: the translation is out of date.
import { createHash } from 'node:crypto'

/** The languages the course is translated into; English is the source. */
export const LANGUAGES = ['zh-CN', 'ko'] as const
export type Language = (typeof LANGUAGES)[number]

/** The stamp of an English text: 8 hex digits of its SHA-256, over the text with CRLF read as LF and trailing blanks dropped. */
export function stampOf(english: string): string {
  const normalized = english
    .replaceAll('\r\n', '\n')
    .replace(/[ \t]+$/gm, '')
    .trim()
  return createHash('sha256').update(normalized).digest('hex').slice(0, 8)
}
