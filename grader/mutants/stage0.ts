// Stage 0's known-wrong query: the exercise is one SQL statement, and its
// classic slip is a symmetric self-join.
import type { Mutant } from './mutant.ts'

export const stage0Mutants: Mutant[] = [
  {
    id: 'flags-both-rows',
    stage: 0,
    title: 'the self-join pairs rows in both directions, so the original of every copy is flagged too',
    mustFail: 'suspected-duplicates',
    edits: [
      {
        file: 'suspectedDuplicates.ts',
        find: '    ON  original.seq < copy.seq',
        replace: '    ON  original.id <> copy.id',
      },
      {
        file: 'suspectedDuplicates.ts',
        find: '    AND julianday(copy.created_at) - julianday(original.created_at) BETWEEN 0 AND 60.0 / 86400',
        replace: '    AND abs(julianday(copy.created_at) - julianday(original.created_at)) <= 60.0 / 86400',
      },
    ],
  },
]
