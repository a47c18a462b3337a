// Stage 0 (unprotected): solution, starter and mutants (see helpers/stageSuite.ts).
// The starter is the bank with no layer, so it passes the bank's own checks
// and fails only the exercise, the duplicate-finding query.
import { stage0Mutants } from '#grader/mutants/stage0.ts'
import { stageSuite } from './helpers/stageSuite.ts'

stageSuite(0, {
  mutants: stage0Mutants,
  starterPasses: ['bank-basics', 'transfers-move-money', 'concurrent-transfers', 'bad-input', 'auth-and-ownership'],
})
