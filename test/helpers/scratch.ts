// Temporary folders that double as markers. Every server a test starts gets
// its database (LAB_DB) inside such a folder, so the folder's path, found in a
// process's environment, says "this process belongs to this test".
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'vitest'
import { onCleanup } from '#harness/processes.ts'
import { grade, type GradeOptions, type GradeResult } from '#grader/grade.ts'
import { leftoverAfter, processesWithMarker } from './procs.ts'

const systemTmp = tmpdir()

export type Scratch = {
  path: string
  dispose(): void
  /**
   * A file's last word (call it from afterAll, after stopping what the file
   * stopped itself): no process whose environment or command line holds this
   * folder is left, then the folder goes.
   */
  disposeExpectingNoneLeft(what?: string): Promise<void>
}

export function scratchDir(label: string): Scratch {
  const path = mkdtempSync(join(systemTmp, `idem-lab-test-${label}-`))
  // Also removed when the test run is interrupted (stopOnSignal.ts).
  const forget = onCleanup(() => rmSync(path, { recursive: true, force: true }))
  const dispose = () => {
    forget()
    rmSync(path, { recursive: true, force: true })
  }
  return {
    path,
    dispose,
    async disposeExpectingNoneLeft(what = 'processes left running by this file') {
      const left = await leftoverAfter(() => processesWithMarker(path))
      dispose()
      expect(
        left.map((p) => `${p.pid} ${p.cmdline}`),
        what,
      ).toEqual([])
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
