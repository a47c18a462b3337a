// The seeds the grader's self-tests grade with, in one place. npm test
// grades each stage's reference solution and every one of its mutants on the
// stage's `test` seed; the repetitions (npm run test:repeat) sweep seeds 1 to
// N, plus each stage's `more` seeds, less its `test` seed, which npm test
// already graded: no pair of code and seed graded in one tier is dropped by
// the other, and none is graded twice.
export type StageSeeds = {
  /** npm test's seed for the stage: its solution's whole grade, its starter and each of its mutants. */
  test: number
  /** Seeds the repetitions grade besides 1 to N: ones the stage tests used to grade, kept. */
  more: number[]
}

export const PINNED_SEEDS: Record<number, StageSeeds> = {
  0: { test: 3, more: [5_050] },
  1: { test: 7, more: [4_242] },
  2: { test: 3, more: [2_718] },
  3: { test: 3, more: [4_242] },
  4: { test: 4, more: [6_060] },
  5: { test: 11, more: [5_001] },
  6: { test: 6_006, more: [507_735] },
}

/**
 * A check on a seed where it once failed a reference solution through the
 * check's own fault, graded on that check alone by npm test (the
 * repetitions grade the whole stage on it: its stage's `more`). 507735:
 * small-pool drew four transfers from an account that opened with less than
 * their sum (a 402).
 */
export const REGRESSION_SEEDS: Array<{ stage: number; check: string; seed: number }> = [{ stage: 6, check: 'small-pool-answers-duplicates', seed: 507_735 }]

/** The seeds the repetitions grade `stage` on, for a sweep of 1 to `count` (from `first`). */
export function sweepSeeds(stage: number, count: number, first = 1): number[] {
  const { test, more } = PINNED_SEEDS[stage]!
  const sweep = Array.from({ length: count }, (_, i) => first + i)
  return [...new Set([...sweep, ...more])].filter((seed) => seed !== test)
}
