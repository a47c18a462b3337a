// Stage 6 (production, on PostgreSQL): solution, starter and mutants (see
// helpers/stageSuite.ts), each grade on the run's PostgreSQL server
// (test/setup/postgres.ts) with databases of its own.
import { stage6Mutants } from '#grader/mutants/stage6.ts'
import { stageSuite } from './helpers/stageSuite.ts'

stageSuite(6, {
  mutants: stage6Mutants,
  // The starter is stage 5's layer on PostgreSQL: the instance's own clock and an unbatched purge are
  // what it lacks, so it fails the clock checks (leases, and the purge's) and passes the rest.
  starterPasses: [
    'three-instances-execute-once',
    'crash-then-takeover',
    'simultaneous-takeovers-once',
    'small-pool-answers-duplicates',
    'contended-accounts-all-execute',
  ],
})
