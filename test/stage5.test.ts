// Stage 5 (scope and TTL): solution, starter and mutants (see helpers/stageSuite.ts).
import { stage5Mutants } from '#grader/mutants/stage5.ts'
import { stageSuite } from './helpers/stageSuite.ts'

stageSuite(5, {
  mutants: stage5Mutants,
  // A replay within the TTL is stage 4's replay, and a claim in flight past its TTL is still
  // stage 4's claim (the starter never expires anything); its one global key space cannot
  // split a route by its spelling: all three pass on the starter.
  starterPasses: ['one-route-any-spelling', 'replay-before-expiry', 'in-flight-across-ttl'],
})
