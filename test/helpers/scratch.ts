// Temporary folders that double as markers. Every server a test starts gets
// its database (LAB_DB) inside such a folder, so the folder's path, found in a
// process's environment, says "this process belongs to this test".
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'vitest'
import { onCleanup } from '#harness/processes.ts'
import { grade, type GradeOptions, type GradeResult } from '#grader/grade.ts'
import { leftBehind, NOTHING_LEFT } from './leftovers.ts'

const systemTmp = tmpdir()

export type Scratch = {
  path: string
  dispose(): void
  /**
   * A file's last word (call it from afterAll, after stopping what the file
   * stopped itself): nothing is left (leftovers.ts: no process whose
   * environment or command line holds this folder, no temp folder in it, no
   * orphaned cluster or cgroup), then the folder goes.
   */
  disposeExpectingNoneLeft(what?: string): Promise<void>
}

export function scratchDir(label: string): Scratch {
  const path = mkdtempSync(join(systemTmp, `idem-lab-test-${label}-`))
  // Others may pass through (not list): a root grader's workspaces for nobody
  // (isolation "user") then go in here too, where the leftover checks look.
  chmodSync(path, 0o711)
  // Also removed when the test run is interrupted (stopOnSignal.ts).
  const forget = onCleanup(() => rmSync(path, { recursive: true, force: true }))
  const dispose = () => {
    forget()
    rmSync(path, { recursive: true, force: true })
  }
  return {
    path,
    dispose,
    async disposeExpectingNoneLeft(what = 'left behind by this file') {
      const left = await leftBehind([path])
      dispose()
      expect(left, what).toEqual(NOTHING_LEFT)
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
