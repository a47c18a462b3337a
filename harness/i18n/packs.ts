// The translations of what the grader says, one pack per language
// (i18n/<lang>.json): the stages' titles, summaries and hints, the checks'
// titles and hints, and the UI messages. Each item carries the stamp of the
// English it translates; an item whose stamp no longer matches the English
// is out of date, and the English is shown instead (never a stale
// translation). English itself is the source and needs no pack.
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { z } from 'zod'
import type { Stage } from '../course.ts'
import { repoRoot } from '../paths.ts'
import type { Lang } from './language.ts'
import { type Language, stampOf } from './stamp.ts'

const Translated = { source: z.string().regex(/^[0-9a-f]{8}$/) }

export const PackSchema = z.strictObject({
  stages: z.record(z.string().regex(/^\d+$/), z.strictObject({ title: z.string(), summary: z.string(), hints: z.array(z.string()), ...Translated })),
  checks: z.record(z.string(), z.strictObject({ title: z.string(), hint: z.string(), ...Translated })),
  messages: z.record(z.string(), z.strictObject({ text: z.string(), ...Translated })),
})
export type Pack = z.infer<typeof PackSchema>

export type StageText = Pick<Stage, 'title' | 'summary' | 'hints'>
export type CheckText = { id: string; title: string; hint: string }

/** The English a stage's translation translates, as one text: title, summary and hints, one a line. */
export const stageSource = (stage: StageText): string => [stage.title, stage.summary, ...stage.hints].join('\n')
/** The English a check's translation translates: title, then hint. */
export const checkSource = (check: Omit<CheckText, 'id'>): string => `${check.title}\n${check.hint}`

export const packFile = (lang: Language): string => resolve(repoRoot, 'i18n', `${lang}.json`)

const loaded = new Map<Language, Pack>()

/** The pack of `lang`, read and validated once; a malformed pack throws (the grader failing, not the learner). */
export function pack(lang: Language): Pack {
  let p = loaded.get(lang)
  if (!p) {
    p = PackSchema.parse(JSON.parse(readFileSync(packFile(lang), 'utf8')))
    loaded.set(lang, p)
  }
  return p
}

/** A stage's title, summary and hints in `lang`; the English where the translation is missing or out of date. */
export function stageText(lang: Lang, stage: Stage): StageText {
  const t = lang === 'en' ? undefined : pack(lang).stages[String(stage.number)]
  const { title, summary, hints } = t && t.source === stampOf(stageSource(stage)) && t.hints.length === stage.hints.length ? t : stage
  return { title, summary, hints }
}

/** A check's title and hint in `lang` (`check` holds the English); the English where the translation is missing or out of date. */
export function checkText(lang: Lang, check: CheckText): Omit<CheckText, 'id'> {
  const t = lang === 'en' ? undefined : pack(lang).checks[check.id]
  const { title, hint } = t && t.source === stampOf(checkSource(check)) ? t : check
  return { title, hint }
}

/** Message `id` in `lang`, `english` being its source; the English where the translation is missing or out of date. */
export function messageText(lang: Lang, id: string, english: string): string {
  if (lang === 'en') return english
  const t = pack(lang).messages[id]
  return t && t.source === stampOf(english) ? t.text : english
}
