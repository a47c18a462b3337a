// A language pack against the course as it is now, in two lists. To
// translate: an item missing, or translated from an English that has changed
// since (its stamp no longer matches); the grader shows the English for it
// until it is translated and stamped (harness/i18n/packs.ts), so it is
// listed by npm run i18n:status, never a failure. Broken: what a current
// item gets wrong whatever its translation (a stage with another number of
// hints, a message with other placeholders) and an id the course no longer
// has; npm test fails on these (test/i18n.grader.test.ts).
import type { Stage } from '#harness/course.ts'
// Every template registers when its module loads: the phrasebook loads them all.
import '#grader/phrasebook.ts'
import { placeholdersOf, templates } from '#harness/i18n/phrase.ts'
import { type CheckText, checkSource, type Pack, stageSource } from '#harness/i18n/packs.ts'
import { type Language, stampOf } from '#harness/i18n/stamp.ts'

export type PackItemKind = 'stage' | 'check' | 'message'

/** An item to translate: `kind` and `id` are what npm run i18n:stamp-pack takes. */
export type PackTodo = { kind: PackItemKind; id: string; state: 'missing' | 'out of date'; english: string }

export type PackStatus = {
  language: Language
  todo: PackTodo[]
  /** One line per problem, naming the pack, the item and what is wrong. */
  broken: string[]
  /** How many items the course has (stages, checks and messages). */
  items: number
}

/** What a pack has to say for the course: its stages (number, title, summary, hints), its checks, its message templates (by default every one registered: the grader's lines and its checks' sentences, phrase.ts). */
export type PackCourse = {
  stages: readonly Pick<Stage, 'number' | 'title' | 'summary' | 'hints'>[]
  checks: readonly CheckText[]
  messages?: Readonly<Record<string, string>>
}

/** `course.checks` are the course's checks with their English (the grader's; the harness does not load them itself). */
export function packStatus(language: Language, p: Pack, course: PackCourse): PackStatus {
  const file = `i18n/${language}.json`
  const messages = course.messages ?? Object.fromEntries(templates())
  const todo: PackTodo[] = []
  const broken: string[] = []
  /** Whether the item is there and current; when not, it is listed to translate. */
  const current = (kind: PackItemKind, id: string, item: { source: string } | undefined, english: string): boolean => {
    if (item?.source === stampOf(english)) return true
    todo.push({ kind, id, state: item ? 'out of date' : 'missing', english })
    return false
  }
  for (const stage of course.stages) {
    const item = p.stages[String(stage.number)]
    if (current('stage', String(stage.number), item, stageSource(stage)) && item!.hints.length !== stage.hints.length)
      broken.push(`${file} stage ${stage.number}: ${item!.hints.length} hints for the English's ${stage.hints.length}`)
  }
  for (const check of course.checks) current('check', check.id, p.checks[check.id], checkSource(check))
  for (const [id, english] of Object.entries(messages)) {
    const item = p.messages[id]
    if (!current('message', id, item, english)) continue
    const [theirs, ours] = [placeholdersOf(item!.text), placeholdersOf(english)].map((names) => names.map((n) => `{${n}}`).join(' '))
    if (theirs !== ours) broken.push(`${file} message ${id}: placeholders ${theirs || 'none'}, the English has ${ours || 'none'}`)
  }
  const known = {
    stage: course.stages.map((s) => String(s.number)),
    check: course.checks.map((c) => c.id),
    message: Object.keys(messages),
  }
  const extra = (kind: PackItemKind, ids: string[]) =>
    ids.filter((id) => !known[kind].includes(id)).map((id) => `${file} ${kind} ${id}: the course has no such ${kind}; remove it from the pack`)
  broken.push(...extra('stage', Object.keys(p.stages)), ...extra('check', Object.keys(p.checks)), ...extra('message', Object.keys(p.messages)))
  return { language, todo, broken, items: known.stage.length + known.check.length + known.message.length }
}
