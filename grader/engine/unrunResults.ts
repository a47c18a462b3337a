// The results of checks that were not run, or not to the end, in one place:
// every way a grade can leave a check without a verdict of its own.
//   - skipped: the check needs more than this grade's server offers (check.needs);
//   - refused: the graded folder loads the reference answer (copiedAnswers.ts);
//   - failed to start / not run: the server did not start; the first check
//     carries the error, every other one points at it;
//   - stopped answering / not judged: the server hung during a check
//     (watchdog.ts); that check says so, every later one points at it.
import type { Stage } from '#harness/course.ts'
import { type Line, phrases } from '#harness/i18n/phrase.ts'
import type { Check } from './check.ts'
import type { CheckResult } from './checkResult.ts'
import { startFailureMessage } from './startFailure.ts'

const say = phrases('unrun', {
  skipped: 'skipped: {why}',
  copiedHint: 'Write the stage yourself: a learner file may use bank/ and the given/ pieces of earlier stages, never solutions/.',
  startHint: 'Start it yourself with `npm run serve -- {stage}` and read what it prints.',
  notRun: 'not run: the server did not start (see {first})',
  afterHang: 'not judged: your server stopped answering during {check}',
})

/** A result with nothing run: no points, no time, no inputs drawn. */
function unrun(check: Check, stage: Stage, fields: Pick<CheckResult, 'passed' | 'status' | 'maxPoints' | 'message' | 'hint'>): CheckResult {
  return { id: check.id, stage: stage.number, title: check.title, points: 0, notes: [], durationMs: 0, inputs: { draws: 0, digest: '' }, ...fields }
}

/** A check this grade's server cannot take: no points, and not a failure. */
export function skipped(check: Check, stage: Stage, why: Line): CheckResult {
  return unrun(check, stage, { passed: true, status: 'skipped', maxPoints: 0, message: say('skipped', { why }), hint: check.hint })
}

/** A check not run because the graded folder loads the reference answer (copiedAnswers.ts). */
export function refused(check: Check, stage: Stage, reason: Line): CheckResult {
  return unrun(check, stage, {
    passed: false,
    status: 'fail',
    maxPoints: check.points,
    message: reason,
    hint: say('copiedHint'),
  })
}

/** The first check, when the server did not start (or its code did not build): the error, with file:line. */
export function failedToStart(check: Check, stage: Stage, reason: string, gradedStage: number, limit?: Line): CheckResult {
  return unrun(check, stage, {
    passed: false,
    status: 'error',
    maxPoints: check.points,
    message: startFailureMessage(reason, limit),
    hint: say('startHint', { stage: gradedStage }),
  })
}

/** Every check after the first, when the server did not start: listed, with no copy of the error. */
export function notRun(check: Check, stage: Stage, firstId: string): CheckResult {
  return unrun(check, stage, {
    passed: false,
    status: 'error',
    maxPoints: check.points,
    message: say('notRun', { first: firstId }),
    hint: '',
  })
}

/** True for the checks notRun() produced: the report prints them on one line each. */
export const isNotRun = (r: CheckResult) => r.status === 'error' && String(r.message).startsWith('not run: ')

/** Every check after the one during which the server stopped answering: not judged, pointing at it. */
export function afterHang(check: Check, stage: Stage, hungIn: string): CheckResult {
  return {
    ...unrun(check, stage, {
      passed: false,
      status: 'not-judged',
      maxPoints: check.points,
      message: say('afterHang', { check: hungIn }),
      hint: '',
    }),
    blockedBy: hungIn,
  }
}
