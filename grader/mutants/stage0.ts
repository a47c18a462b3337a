// Stage 0's known-wrong query: the exercise is one SQL statement, and its
// classic slip is a symmetric self-join.
import { editsOf, type Mutant } from './mutant.ts'

const query = editsOf('suspectedDuplicates.ts')

export const stage0Mutants: Mutant[] = [
  {
    id: 'flags-both-rows',
    stage: 0,
    title: 'the self-join pairs rows in both directions, so the original of every copy is flagged too',
    mustFail: 'suspected-duplicates',
    edits: [
      query('SUSPECTED_DUPLICATES_SQL', 'original.seq < copy.seq', 'original.id <> copy.id'),
      query(
        'SUSPECTED_DUPLICATES_SQL',
        'julianday(copy.created_at) - julianday(original.created_at) BETWEEN 0 AND 60.0 / 86400',
        'abs(julianday(copy.created_at) - julianday(original.created_at)) <= 60.0 / 86400',
      ),
    ],
  },
]
