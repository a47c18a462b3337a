// Stage 4 (replay): solution, starter and mutants (see helpers/stageSuite.ts).
// The starter answers a completed duplicate with stage 3's 200 already-processed: no check can pass.
import { stage4Mutants } from '#grader/mutants/stage4.ts'
import { stageSuite } from './helpers/stageSuite.ts'

stageSuite(4, { seeds: [4, 6_060, 81_004], mutants: stage4Mutants })
