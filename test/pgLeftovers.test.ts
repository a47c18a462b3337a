// The embedded PostgreSQL's folders a killed grader could not remove
// (harness/pgLeftovers.ts): the next embedded server removes those whose
// maker and postmaster are both gone, and nothing else.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { CLUSTER_PREFIX, markMaker, removeOrphanedClusters } from '#harness/pgLeftovers.ts'
import { scratchDir } from './helpers/scratch.ts'

const scratch = scratchDir('pg-leftovers')
afterAll(() => scratch.dispose())

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' })
  return Number(child.stdout.trim())
}

function cluster(name: string, files: { maker?: number; postmaster?: number }): string {
  const dir = join(scratch.path, name)
  mkdirSync(join(dir, 'data'), { recursive: true })
  if (files.maker !== undefined) writeFileSync(join(dir, 'maker.pid'), `${files.maker}\n`)
  if (files.postmaster !== undefined) writeFileSync(join(dir, 'data', 'postmaster.pid'), `${files.postmaster}\n/tmp/x/data\n`)
  return dir
}

describe('removeOrphanedClusters', () => {
  it('removes a cluster whose maker and postmaster are gone, and leaves every other folder', () => {
    const dead = deadPid()
    const orphan = cluster(`${CLUSTER_PREFIX}orphan`, { maker: dead, postmaster: deadPid() })
    const neverStarted = cluster(`${CLUSTER_PREFIX}initdb-only`, { maker: dead })
    const mine = join(scratch.path, `${CLUSTER_PREFIX}mine`)
    mkdirSync(mine)
    markMaker(mine)
    const serverStillUp = cluster(`${CLUSTER_PREFIX}postmaster-up`, { maker: dead, postmaster: process.pid })
    const unmarked = cluster(`${CLUSTER_PREFIX}unmarked`, {})
    const other = cluster('someone-else', { maker: dead })

    expect(removeOrphanedClusters(scratch.path).sort()).toEqual([neverStarted, orphan].sort())
    for (const dir of [mine, serverStillUp, unmarked, other]) expect(existsSync(dir), dir).toBe(true)
    for (const dir of [orphan, neverStarted]) expect(existsSync(dir), dir).toBe(false)
  })

  it('takes a missing base folder as nothing to do', () => {
    expect(removeOrphanedClusters(join(scratch.path, 'no-such-folder'))).toEqual([])
  })
})
