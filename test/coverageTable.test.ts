// `grade --coverage` and the histories checks' notes name the model's
// transitions in the learner's language: every part of every name the model
// can give (grader/model/coverage.ts) has a template, and the table says its
// columns, its rows and why a row is unreachable in the language asked for.
import { describe, expect, it } from 'vitest'
import type { GradeResult } from '#grader/grade.ts'
import { promisesOf } from '#grader/model/contract.ts'
import { transitionSaid, transitionsOf, unreachableSaid } from '#grader/model/coverage.ts'
import { coverageLines } from '#grader/output/coverageTable.ts'
import { course } from '#harness/course.ts'
import { Phrase } from '#harness/i18n/phrase.ts'

/** Every transition any stage's contract has, under every reach, with why it is unreachable where it is. */
const everyTransition = course.stages.flatMap((stage) =>
  [true, false].flatMap((clock) =>
    [true, false].flatMap((holdAlone) => [true, false].flatMap((keyTable) => transitionsOf(promisesOf(stage.number), { clock, holdAlone, keyTable }))),
  ),
)

/** A problem type's slug (key-reused, replay): the contract's word, the same in every language. */
const PROBLEM_TYPE = /^[a-z]+(?:-[a-z]+)*$/

describe("the model's transitions, said in the learner's language", () => {
  it('has a template for every part of every name, except the problem types', () => {
    const names = [...new Set(everyTransition.map((t) => t.name))]
    expect(names.length).toBeGreaterThan(30)
    for (const name of names) {
      const said = transitionSaid(name)
      expect(said, name).toBeInstanceOf(Phrase)
      expect(String(said)).toBe(name)
      for (const value of Object.values((said as Phrase).values)) if (!(value instanceof Phrase)) expect(String(value), name).toMatch(PROBLEM_TYPE)
      expect((said as Phrase).in('ko').replace(/→ [a-z-]+$/, ''), name).not.toMatch(/\b(?:key|body|lease|held|executes|released|core|rows)\b/)
    }
  })

  it('has a template for every reason a transition is unreachable', () => {
    const reasons = [...new Set(everyTransition.flatMap((t) => (t.unreachable ? [t.unreachable] : [])))]
    expect(reasons.length).toBe(5)
    for (const reason of reasons) {
      expect(unreachableSaid(reason), reason).toBeInstanceOf(Phrase)
      expect(String(unreachableSaid(reason))).toBe(reason)
    }
    expect(unreachableSaid('not a reason')).toBe('not a reason')
  })

  it('lays the table out in the language asked for, with the same numbers', () => {
    const coverage = transitionsOf(promisesOf(3), { clock: false, holdAlone: true, keyTable: true }).map((t, i) => ({
      transition: t.name,
      histories: t.unreachable ? 0 : i,
      ...(t.unreachable ? { unreachable: t.unreachable } : {}),
    }))
    const run = { checks: [{ id: 'histories-3', coverage }] } as unknown as GradeResult
    const [english, korean] = [coverageLines([run], 'en'), coverageLines([run], 'ko')]
    expect(korean.length).toBe(english.length)
    expect(english[1]).toBe('  seeds  histories  transition')
    expect(english.some((l) => l.includes('(unreachable here: a lease runs out only on a clock the grader moves)'))).toBe(true)
    expect(korean[0]).toMatch(/^histories-3: 도달할 수 있는 전이 \d+개 중/)
    expect(korean.some((l) => l.includes('(여기서는 도달할 수 없음: 리스는 채점기가 움직이는 시계에서만 끝납니다)'))).toBe(true)
    // Each line keeps its numbers (a translation may reorder them); only the words change.
    const numbers = (line: string) => (line.match(/[\d/]+/g) ?? []).sort()
    for (const [i, line] of english.entries()) expect(numbers(korean[i]!), line).toEqual(numbers(line))
    expect(coverageLines([], 'zh-CN')).toEqual(['没有运行随机历史检查项：没有可覆盖的内容'])
  })
})
