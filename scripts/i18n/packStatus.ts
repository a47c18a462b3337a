// What a language pack lacks against the course as it is now: an item
// missing, an item translated from English that has changed since (its stamp
// no longer matches), a stage with another number of hints, a message with
// other placeholders, an id the course no longer has. Each problem names the
// pack, the id and the English, so that whoever fixes it sees what to translate.
import type { Course } from '#harness/course.ts'
import { MESSAGES, placeholdersOf } from '#harness/i18n/messages.ts'
import { type CheckText, checkSource, pack, stageSource } from '#harness/i18n/packs.ts'
import { type Language, stampOf } from '#harness/i18n/stamp.ts'

/** `checks` are the course's checks with their English (the grader's; the harness does not load them itself). */
export function packProblems(lang: Language, course: Course, checks: CheckText[]): string[] {
  const p = pack(lang)
  const file = `i18n/${lang}.json`
  const problems: string[] = []
  const expectCurrent = (what: string, item: { source: string } | undefined, english: string) => {
    if (!item) problems.push(`${file} ${what}: missing, a translation of ${JSON.stringify(english)}`)
    else if (item.source !== stampOf(english)) problems.push(`${file} ${what}: out of date, the English is now ${JSON.stringify(english)}`)
  }
  for (const stage of course.stages) {
    const item = p.stages[String(stage.number)]
    expectCurrent(`stage ${stage.number}`, item, stageSource(stage))
    if (item && item.hints.length !== stage.hints.length)
      problems.push(`${file} stage ${stage.number}: ${item.hints.length} hints for the English's ${stage.hints.length}`)
  }
  for (const check of checks) expectCurrent(`check ${check.id}`, p.checks[check.id], checkSource(check))
  for (const [id, english] of Object.entries(MESSAGES)) {
    const item = p.messages[id]
    expectCurrent(`message ${id}`, item, english)
    const [theirs, ours] = [placeholdersOf(item?.text ?? english), placeholdersOf(english)].map((names) => names.map((n) => `{${n}}`).join(' '))
    if (theirs !== ours) problems.push(`${file} message ${id}: placeholders ${theirs || 'none'}, the English has ${ours || 'none'}`)
  }
  const known = {
    stage: course.stages.map((s) => String(s.number)),
    check: checks.map((c) => c.id),
    message: Object.keys(MESSAGES),
  }
  const extra = (kind: keyof typeof known, ids: string[]) =>
    ids.filter((id) => !known[kind].includes(id)).map((id) => `${file} ${kind} ${id}: the course has no such ${kind}`)
  problems.push(...extra('stage', Object.keys(p.stages)), ...extra('check', Object.keys(p.checks)), ...extra('message', Object.keys(p.messages)))
  return problems
}
