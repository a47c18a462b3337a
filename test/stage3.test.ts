// Stage 3 (in-progress): solution, starter and mutants (see helpers/stageSuite.ts).
import { stage3Mutants } from '#grader/mutants/stage3.ts'
import { stageSuite } from './helpers/stageSuite.ts'

stageSuite(3, {
  mutants: stage3Mutants,
  // A different payload, in flight or after a lease ran out, already gets 422 from stage 2's fingerprint, which the starter keeps.
  // Its claim says "done" from the start: a crash after the commit leaves the retry told so (its flaw is the crash before it).
  starterPasses: ['in-flight-different-payload-422', 'crash-after-commit', 'takeover-different-body-422'],
})
