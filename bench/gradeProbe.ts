// One grading run of a reference solution, in a process of its own so that
// its peak memory is the grader's alone:
//   node harness/launch.mjs bench/gradeProbe.ts <stage> <seed> [no-regression]
// Prints one JSON line. maxRSS is this process only (not the bank servers it
// starts, which are separate processes).
import { grade } from '#grader/grade.ts'

const [stage, seed] = process.argv.slice(2).map(Number)
const noRegression = process.argv[4] === 'no-regression'
const result = await grade({ stage: stage!, seed: seed!, source: { kind: 'solution' }, noRegression })
const failed = result.checks.filter((c) => !c.passed).map((c) => c.id)
console.log(
  JSON.stringify({
    passed: result.passed,
    score: result.score,
    maxScore: result.maxScore,
    checks: result.checks.length,
    failed,
    gradeMs: result.durationMs,
    serverStarts: result.serverStarts,
    maxRssMb: process.resourceUsage().maxRSS / 1024,
  }),
)
process.exit(0)
