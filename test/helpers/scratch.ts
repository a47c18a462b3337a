// Temporary folders that double as markers. Every server a test starts gets
// its database (LAB_DB) inside such a folder, so the folder's path, found in a
// process's environment, says "this process belongs to this test".
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { onCleanup } from '#harness/processes.ts'
import { grade, type GradeOptions, type GradeResult } from '#grader/runner.ts'

const systemTmp = tmpdir()

export function scratchDir(label: string): { path: string; dispose(): void } {
  const path = mkdtempSync(join(systemTmp, `idem-lab-test-${label}-`))
  // Also removed when the test run is interrupted (stopOnSignal.ts).
  const forget = onCleanup(() => rmSync(path, { recursive: true, force: true }))
  return {
    path,
    dispose: () => {
      forget()
      rmSync(path, { recursive: true, force: true })
    },
  }
}

/**
 * grade() with its workspace (and so every server's LAB_DB) inside `dir`. The
 * Workspace is created synchronously when grade() is called, so TMPDIR only
 * needs to point at `dir` for that call: concurrent grades each keep their own.
 */
export function gradeIn(dir: string, options: GradeOptions): Promise<GradeResult> {
  const saved = process.env.TMPDIR
  process.env.TMPDIR = dir
  try {
    return grade(options)
  } finally {
    if (saved === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = saved
  }
}
