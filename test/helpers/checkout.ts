// A checkout of the course as `--dir` grades it, made in a test's folder: only
// the learner files given, the rest coming from the course itself.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { stageByNumber } from '#harness/course.ts'

/** A checkout at `root/name` holding one learner file, `file`, of one stage. */
export function checkoutWith(root: string, name: string, stage: number, file: string, text: string): string {
  const dir = join(root, name)
  const folder = join(dir, 'stages', stageByNumber(stage).folder)
  mkdirSync(folder, { recursive: true })
  writeFileSync(join(folder, file), text)
  return dir
}
