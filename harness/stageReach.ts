// What a stage's code may read, wherever it runs: its own folder, the given/
// pieces of the stages before it (each stage builds on them), and the course
// runtime it is run with. Never solutions/. The sandbox (sandbox.ts) binds
// exactly these, Node's permission model (confinement.ts) allows exactly
// these, and a bundle of the stage's code (bundle.ts) may import nothing else.
import { existsSync, realpathSync } from 'node:fs'
import { resolve } from 'node:path'
import { course } from './course.ts'
import { repoRoot } from './paths.ts'

/** Course files every stage's code runs on. */
export const COURSE_RUNTIME = ['bank', 'node_modules', 'package.json', 'tsconfig.json'].map((p) => resolve(repoRoot, p))

/** The given/ pieces of the stages before `stage`. */
export const earlierGiven = (stage: number) => course.stages.filter((s) => s.number < stage).map((s) => resolve(repoRoot, 'given', s.folder))

/**
 * Everything the code of `stage` (in `ownDirs`: its folder, an overlay of
 * it) may read, as real paths: links followed. Code of no stage (NaN) gets
 * no given/ piece.
 */
export function stageReach(stage: number, ownDirs: string[]): string[] {
  const given = Number.isInteger(stage) ? earlierGiven(stage) : []
  return [...new Set([...ownDirs, ...given, ...COURSE_RUNTIME].filter((p) => existsSync(p)).map((p) => realpathSync(p)))]
}
