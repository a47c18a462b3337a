// Which language a command speaks to the learner: --lang when given (and then
// remembered, as the hints are), else the one remembered, else the locale's
// (LC_ALL, LC_MESSAGES, LANG, the first set decides, as POSIX reads them)
// when it names a language of the course, else English.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { z } from 'zod'
import { labFile } from '../labHome.ts'
import { LANGUAGES, type Language } from './stamp.ts'

/** A language the grader speaks: English, the source, or a translation. */
export type Lang = 'en' | Language

export const LANG_CHOICES: readonly Lang[] = ['en', ...LANGUAGES]

export class LanguageError extends Error {}

const isLang = (value: string): value is Lang => (LANG_CHOICES as readonly string[]).includes(value)

const stateFile = () => labFile('language.json')

const Remembered = z.object({ lang: z.enum(LANG_CHOICES as [Lang, ...Lang[]]) })

function remembered(): Lang | undefined {
  try {
    return Remembered.parse(JSON.parse(readFileSync(stateFile(), 'utf8'))).lang
  } catch {
    return undefined // none chosen yet, or a file we cannot read: as if none
  }
}

function remember(lang: Lang) {
  mkdirSync(dirname(stateFile()), { recursive: true })
  writeFileSync(stateFile(), `${JSON.stringify({ lang }, null, 2)}\n`)
}

/** The course language a locale names: zh_CN.UTF-8 → zh-CN, ko_KR.UTF-8 → ko; C, en_US or zh_TW → none. */
export function languageOfLocale(locale: string): Language | undefined {
  const [language, region] = (locale.split(/[.@]/)[0] ?? '').split(/[_-]/)
  if (language?.toLowerCase() === 'ko') return 'ko'
  if (language?.toLowerCase() === 'zh' && region?.toUpperCase() === 'CN') return 'zh-CN'
  return undefined
}

/** The language of this command; `flag` is --lang's value. Throws LanguageError on one the course does not speak. */
export function chooseLanguage(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): Lang {
  if (flag !== undefined) {
    if (!isLang(flag)) throw new LanguageError(`--lang ${flag}: the grader speaks ${LANG_CHOICES.join(', ')}`)
    remember(flag)
    return flag
  }
  const locale = env.LC_ALL || env.LC_MESSAGES || env.LANG
  return remembered() ?? (locale ? languageOfLocale(locale) : undefined) ?? 'en'
}
