// The learner-loop flags of `npm run grade`: the faster, narrower runs and
// --keep. Kept apart from grade.ts so the grade command's own options stay short.
import type { GradeOptions } from '../grade.ts'
import { course, type Stage } from '#harness/course.ts'
import { refusal, UsageError } from './usageErrors.ts'

export const LOOP_OPTIONS = {
  only: { type: 'string', multiple: true },
  'no-regression': { type: 'boolean', default: false },
  keep: { type: 'boolean', default: false },
  'start-timeout': { type: 'string' },
} as const

type LoopValues = { only?: string[]; 'no-regression'?: boolean; keep?: boolean; 'start-timeout'?: string }

export class LoopOptionError extends UsageError {}

/** The GradeOptions these flags mean for `stage`; throws LoopOptionError on a bad value. */
export function loopGradeOptions(
  stage: Stage | undefined,
  values: LoopValues,
  json: string | undefined,
): { partial: boolean; keep: boolean; grade: Partial<GradeOptions> } {
  // course.json's ids (test/course.test.ts keeps them equal to the checks'):
  // the check modules themselves load later, so that one failing to load is exit 2.
  const known = course.stages.filter((s) => !stage || s.number <= stage.number).flatMap((s) => s.checks)
  const unknown = (values.only ?? []).filter((id) => !known.includes(id))
  if (unknown.length)
    throw new LoopOptionError(
      stage
        ? refusal('noSuchCheckUpTo', { ids: unknown.join(', '), stage: stage.number, known: known.join(', ') })
        : refusal('noSuchCheck', { ids: unknown.join(', '), known: known.join(', ') }),
    )
  const partial = !!values.only?.length || !!values['no-regression']
  // A score means the full grade: a narrowed run must not be filed as one.
  if (partial && json) throw new LoopOptionError(refusal('jsonFullOnly'))
  let startTimeoutMs: number | undefined
  if (values['start-timeout'] !== undefined) {
    const seconds = Number(values['start-timeout'])
    if (!(seconds > 0)) throw new LoopOptionError(refusal('startTimeoutSeconds'))
    startTimeoutMs = seconds * 1000
  }
  return {
    partial,
    keep: !!values.keep,
    grade: { only: values.only?.length ? values.only : undefined, noRegression: values['no-regression'], keep: values.keep, startTimeoutMs },
  }
}
