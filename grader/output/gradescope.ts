// A grade as Gradescope's autograder reads it: /autograder/results/results.json
// (gradescope-autograders.readthedocs.io/en/latest/specs/). A pure function of
// the v1 result (docs/grade-result.md), so what the learner sees there is
// what `--json` says: the score is the stage's own checks', each check is a
// test numbered "stage.index", and an earlier stage's check run as regression
// is a test worth nothing either way. English, as the v1 result is.
import type { GradedCheckResult, GradeResult } from '../engine/gradeResult.ts'
import { gradeFacts } from '../engine/gradeResult.ts'
import { ungradedTest } from './ungraded.ts'
import { failureBlocks, verdictLines, verdictWord } from './report.ts'
import { t } from '#harness/i18n/messages.ts'

export type GradescopeTest = {
  name: string
  number: string
  score: number
  max_score: number
  status: 'passed' | 'failed'
  output: string
  tags: string[]
  visibility: 'visible'
  extra_data: Record<string, unknown>
}

export type GradescopeResults = {
  score: number
  output: string
  tests: GradescopeTest[]
  extra_data: Record<string, unknown>
}

export function toGradescope(result: GradeResult): GradescopeResults {
  const rerun = t('en', 'summary.rerun', { seed: result.seed, rerun: result.rerun })
  const extra_data = gradeFacts(result)
  const ungraded = ungradedTest(result)
  // Nothing was graded (a server that never started, an answer refused):
  // one failed test that says why, not one per check all saying the same.
  if (ungraded)
    return {
      score: 0,
      output: [ungraded.summary, rerun].join('\n'),
      tests: [
        {
          name: ungraded.name,
          number: `${result.stage}.0`,
          score: 0,
          max_score: result.maxScore,
          status: 'failed',
          output: ungraded.details.join('\n'),
          tags: [stageTag(result.stage)],
          visibility: 'visible',
          extra_data: { seed: result.seed, gradable: false },
        },
      ],
      extra_data,
    }
  return {
    score: result.score,
    output: [...verdictLines(result, 'en', verdictWord), rerun].join('\n'),
    tests: result.checks.map((check) => toTest(check, indexInStage(result.checks, check), result.seed)),
    extra_data,
  }
}

function toTest(check: GradedCheckResult, index: number, seed: number): GradescopeTest {
  return {
    name: `${check.title} [${check.id}]`,
    number: `${check.stage}.${index}`,
    // A regression check is informational: its layer comes solved in the stage folder, so it earns nothing either way.
    score: check.regression ? 0 : check.points,
    max_score: check.regression ? 0 : check.maxPoints,
    status: check.passed ? 'passed' : 'failed',
    output: testOutput(check),
    tags: check.regression ? [stageTag(check.stage), 'regression'] : [stageTag(check.stage)],
    visibility: 'visible',
    extra_data: { check: check.id, status: check.status, seed, digest: check.inputs.digest, draws: check.inputs.draws },
  }
}

function testOutput(check: GradedCheckResult): string {
  const lines = check.regression ? [`regression: a check of stage ${check.stage}, run again on this stage's folder; not in the score`] : []
  lines.push(...check.notes.map(String))
  // Skipped and not judged carry their reason in the message, and no failure of their own.
  if (check.status === 'skipped' || check.status === 'not-judged') lines.push(String(check.message))
  else if (!check.passed) lines.push(...failureBlocks(check).map((b) => b.text))
  return lines.join('\n')
}

const stageTag = (stage: number) => `stage ${stage}`

/** A check's place among its own stage's checks, from 1: the grade runs each stage's checks in course.json's order. */
const indexInStage = (checks: GradedCheckResult[], check: GradedCheckResult) => checks.filter((c) => c.stage === check.stage).indexOf(check) + 1
