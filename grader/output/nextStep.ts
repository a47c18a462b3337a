// The line after a verdict: what to do now. A pass points at the next stage
// (or the capstone); a failure at the hint, more hints and the rerun line.
import { course, stageByNumber } from '#harness/course.ts'
import { isFailure } from '../engine/checkResult.ts'
import type { GradeResult } from '../engine/runner.ts'
import { describeSource, type Source } from '#harness/workspace.ts'

export type GradeScope = { partial: boolean }

export function nextStep(g: GradeResult, scope: GradeScope, source: Source = { kind: 'starter' }): string {
  const from = describeSource(source)
  // Only checks left unjudged (e.g. --only picked one whose precondition another check tests): that check first.
  if (!g.passed && !g.checks.some(isFailure)) {
    const needed = [...new Set(g.checks.flatMap((c) => (c.blockedBy ? [c.blockedBy] : [])))]
    return `next: nothing failed here, but ${needed.length ? `it needs ${needed.join(', ')} to pass first: npm run grade -- ${g.stage}${needed.map((id) => ` --only ${id}`).join('')}${from}` : 'some checks could not be judged'}`
  }
  if (!g.passed) return `next: fix the first ✗ above (its hint says where to look); more hints: npm run hint -- ${g.stage}; rerun: ${g.rerun}`
  if (scope.partial) return `next: the full grade, earlier stages included: npm run grade -- ${g.stage}${from}`
  const following = course.stages.find((s) => s.number === g.stage + 1)
  if (!following) return 'next: the capstone, every stage against a whole day of traffic: npm run replay -- all'
  return `next: stage ${following.number} · ${following.title}: read stages/${stageByNumber(following.number).folder}/README.md, then npm run grade -- ${following.number}${from}`
}
