// Known-wrong implementations. A mutant is a reference solution with one
// classic bug, written as exact search-and-replace edits so the bug is
// visible in a few lines and the edit breaks loudly if the solution changes.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { stageByNumber } from '#harness/course.ts'
import { repoRoot } from '#harness/paths.ts'

export type Mutant = {
  /** e.g. `check-then-insert` (unique across the course). */
  id: string
  stage: number
  /** The bug, in a few words a learner would recognise. */
  title: string
  /** The id of the check that must fail on this mutant, every run. */
  mustFail: string
  edits: Array<{ file: string; find: string; replace: string }>
}

/**
 * Writes the mutant as a checkout the grader can take with `--dir`:
 * `.lab/mutants/<id>-XXXXXX/stages/<folder>/` holding the solution's learner
 * files with the edits applied (a new folder per call, so parallel test
 * workers never share one). Returns the checkout's path.
 */
export function materialize(mutant: Mutant): string {
  const stage = stageByNumber(mutant.stage)
  const base = resolve(repoRoot, '.lab', 'mutants')
  mkdirSync(base, { recursive: true })
  const checkout = mkdtempSync(join(base, `${mutant.id}-`))
  const dir = join(checkout, 'stages', stage.folder)
  mkdirSync(dir, { recursive: true })
  for (const file of stage.edits) cpSync(resolve(repoRoot, 'solutions', stage.folder, file), join(dir, file))
  for (const edit of mutant.edits) {
    if (!stage.edits.includes(edit.file)) throw new Error(`mutant ${mutant.id}: ${edit.file} is not a learner file of stage ${stage.number}`)
    const path = join(dir, edit.file)
    const text = readFileSync(path, 'utf8')
    const count = text.split(edit.find).length - 1
    if (count !== 1) throw new Error(`mutant ${mutant.id}: expected the text to replace exactly once in ${edit.file}, found it ${count} times:\n${edit.find}`)
    writeFileSync(
      path,
      text.replace(edit.find, () => edit.replace),
    )
  }
  return checkout
}
