// Stage 3 (in-progress): solution, starter and mutants (see helpers/stageSuite.ts).
import { stage3Mutants } from '#grader/mutants/stage3.ts'
import { stageSuite } from './helpers/stageSuite.ts'

stageSuite(3, {
  seeds: [3, 4_242],
  mutants: stage3Mutants,
  // A different payload, in flight or after a lease ran out, already gets 422 from stage 2's fingerprint, which the starter keeps.
  starterPasses: ['in-flight-different-payload-422', 'takeover-different-body-422'],
})
