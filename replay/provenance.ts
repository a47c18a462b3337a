// Whose code a replayed stage ran: the learner's, the starter exactly as the
// course ships it (a stage not begun, whose figures say nothing about the
// learner), or the reference solution. The chart and the tables say which.
import type { Stage } from '#harness/course.ts'
import { repoRoot } from '#harness/paths.ts'
import { isUntouched } from '#harness/starterHashes.ts'
import type { Source } from '#harness/workspace.ts'

export type CodeKind = 'learner' | 'untouched starter' | 'solution'

/**
 * "untouched starter" when every file the learner edits is byte for byte the
 * course's starter (harness/starterHashes.ts, the same test `grade -- all` uses; a
 * file missing from a --dir checkout counts as the starter, since the overlay
 * then uses ours); "learner" otherwise.
 */
export function codeKind(stage: Stage, source: Source): CodeKind {
  if (source.kind === 'solution') return 'solution'
  return isUntouched(stage, source.kind === 'dir' ? source.path : repoRoot) ? 'untouched starter' : 'learner'
}
