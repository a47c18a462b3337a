// Whose code a replayed stage ran: the learner's, the starter exactly as the
// course ships it (a stage not begun, whose figures say nothing about the
// learner), or the reference solution. The chart and the tables say which.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Stage } from '#grader/course.ts'
import { repoRoot } from '#grader/paths.ts'
import type { Source } from '#grader/workspace.ts'

export type CodeKind = 'learner' | 'untouched starter' | 'solution'

/** The starter file as this course's repository committed it, or undefined when git cannot tell. */
function committedStarter(stage: Stage, file: string): string | undefined {
  try {
    return execFileSync('git', ['show', `HEAD:stages/${stage.folder}/${file}`], { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
  } catch {
    return undefined
  }
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return undefined // a checkout without this file runs the course's own starter
  }
}

/**
 * "untouched starter" when every file the learner edits is byte for byte the
 * committed starter (a missing file in a --dir checkout counts as the
 * starter, since the overlay then uses ours); "learner" otherwise, and also
 * when git is not there to ask (better to credit the learner than to call
 * their work untouched).
 */
export function codeKind(stage: Stage, source: Source): CodeKind {
  if (source.kind === 'solution') return 'solution'
  const root = source.kind === 'dir' ? source.path : repoRoot
  for (const file of stage.edits) {
    const starter = committedStarter(stage, file)
    if (starter === undefined) return 'learner'
    const theirs = read(resolve(root, 'stages', stage.folder, file))
    if (theirs !== undefined && theirs !== starter) return 'learner'
  }
  return 'untouched starter'
}
