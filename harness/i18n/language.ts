// Which language a command speaks to the learner: --lang when given (and then
// remembered, as the hints are), else a locale that names a translation, else
// the one remembered, else English (chooseLanguage says why in that order).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { z } from 'zod'
import { labFile } from '../labHome.ts'
import { LANGUAGES, type Language } from './stamp.ts'

/** A language the grader speaks: English, the source, or a translation. */
export type Lang = 'en' | Language

export const LANG_CHOICES: readonly Lang[] = ['en', ...LANGUAGES]

export class LanguageError extends Error {}

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

/**
 * The course language a BCP 47 tag or a POSIX locale names, by its language
 * and script (Intl.Locale fills in the likely script, as CLDR says): zh,
 * zh-cn, zh-Hans, zh_CN.UTF-8 and zh-SG → zh-CN (simplified Chinese); ko and
 * ko_KR → ko; en and en_US.UTF-8 → en. C, POSIX, zh-TW or zh-Hant
 * (traditional Chinese, which the course does not have) and fr_FR → none.
 */
export function languageOfTag(tag: string): Lang | undefined {
  // A POSIX locale is language_REGION.codeset@modifier: its first part is a tag with _ for -.
  const posix = (tag.split(/[.@]/)[0] ?? '').replaceAll('_', '-')
  let locale: Intl.Locale
  try {
    locale = new Intl.Locale(posix).maximize()
  } catch {
    return undefined // C, POSIX, an empty value, or no tag at all
  }
  if (locale.language === 'zh') return locale.script === 'Hans' ? 'zh-CN' : undefined
  return LANG_CHOICES.find((lang) => lang === locale.language)
}

/** The locale's language: LC_ALL, LC_MESSAGES, LANG, the first set deciding, as POSIX reads them. */
function localeLanguage(env: NodeJS.ProcessEnv): Lang | undefined {
  const locale = env.LC_ALL || env.LC_MESSAGES || env.LANG
  return locale ? languageOfTag(locale) : undefined
}

/**
 * The language of this command; `flag` is --lang's value, any tag that
 * languageOfTag reads. Throws LanguageError, in one line, on one the course
 * does not speak. The order, strongest first:
 *   1. --lang (remembered in .lab/ by rememberLangFlag, once the command
 *      line is accepted: a refused one changes nothing);
 *   2. a locale that names one of the translations (zh_CN.UTF-8, ko_KR.UTF-8);
 *   3. the remembered choice;
 *   4. English.
 * A locale that names English is weaker than the remembered choice: en_US is
 * what most machines are set to, not a choice made for this course, and
 * would otherwise undo every --lang the moment it is remembered.
 */
export function chooseLanguage(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): Lang {
  if (flag !== undefined) {
    const lang = languageOfTag(flag)
    if (!lang) throw new LanguageError(`--lang ${flag}: the grader speaks ${LANG_CHOICES.join(', ')} (zh, zh-Hans and zh_CN.UTF-8 also mean zh-CN)`)
    return lang
  }
  const fromLocale = localeLanguage(env)
  if (fromLocale && fromLocale !== 'en') return fromLocale
  return remembered() ?? 'en'
}

/**
 * Remembers --lang's language for the commands that follow, when the command
 * line had one. A command calls it once it accepted its command line, so that
 * a refused one (`--seed x --lang ko`) leaves the remembered choice as it was.
 */
export function rememberLangFlag(flag: string | undefined, lang: Lang): void {
  if (flag !== undefined) remember(lang)
}
