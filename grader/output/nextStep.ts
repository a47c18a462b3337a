// The line after a verdict: what to do now. A pass points at the next stage
// (or the capstone); a failure at the hint, more hints and the rerun line.
// The words are in the learner's language; the commands stay as typed.
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { course, type Stage } from '#harness/course.ts'
import type { Lang } from '#harness/i18n/language.ts'
import { t } from '#harness/i18n/messages.ts'
import { stageText } from '#harness/i18n/packs.ts'
import { repoRoot } from '#harness/paths.ts'
import { isFailure } from '../engine/checkResult.ts'
import type { GradeResult } from '../grade.ts'
import { describeSource, type Source } from '#harness/workspace.ts'

export type GradeScope = { partial: boolean }

export function nextStep(g: GradeResult, scope: GradeScope, source: Source = { kind: 'starter' }, lang: Lang = 'en'): string {
  const from = describeSource(source)
  // Only checks left unjudged (e.g. --only picked one whose precondition another check tests): that check first.
  if (!g.passed && !g.checks.some(isFailure)) {
    const needed = [...new Set(g.checks.flatMap((c) => (c.blockedBy ? [c.blockedBy] : [])))]
    if (!needed.length) return t(lang, 'next.unjudged')
    const command = `npm run grade -- ${g.stage}${needed.map((id) => ` --only ${id}`).join('')}${from}`
    return t(lang, 'next.blocked', { checks: needed.join(', '), command })
  }
  if (!g.passed) return t(lang, 'next.fix', { hintCommand: `npm run hint -- ${g.stage}`, rerun: g.rerun })
  if (scope.partial) return t(lang, 'next.fullGrade', { command: `npm run grade -- ${g.stage}${from}` })
  const following = course.stages.find((s) => s.number === g.stage + 1)
  if (!following) return t(lang, 'next.capstone')
  return t(lang, 'next.stage', {
    number: following.number,
    title: stageText(lang, following).title,
    readme: readmeOf(following, lang),
    command: `npm run grade -- ${following.number}${from}`,
  })
}

/** The stage README to read: its translation into `lang` when there is one, else the English. */
function readmeOf(stage: Stage, lang: Lang): string {
  const translated = `stages/${stage.folder}/README.${lang}.md`
  return lang !== 'en' && existsSync(resolve(repoRoot, translated)) ? translated : `stages/${stage.folder}/README.md`
}
