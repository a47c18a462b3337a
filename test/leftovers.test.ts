// The helper every file ends with (helpers/leftovers.ts) must be able to
// fail: each kind of leftover it looks for, planted here, is reported, and
// nothing else is.
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { pidsHierarchy } from '#harness/limits.ts'
import { CLUSTER_PREFIX } from '#harness/pgLeftovers.ts'
import { leftBehind, NOTHING_LEFT } from './helpers/leftovers.ts'
import { scratchDir } from './helpers/scratch.ts'

/** The pid of a process that has exited. */
const deadPid = () => Number(spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' }).stdout.trim())

describe('leftBehind', () => {
  it('reports a marked process, a grader temp folder, an orphaned cluster and an orphaned cgroup; nothing once they are gone', async () => {
    const scratch = scratchDir('leftovers')
    const elsewhere = scratchDir('leftovers-clusters')
    const dead = deadPid()
    // Planted in places of this test's own, where no other file's check looks (files run side by side).
    const pids = pidsHierarchy()
    const places = { clusters: elsewhere.path, cgroups: pids && join(pids.base, `idem-leftovers-test-${process.pid}`) }
    const cluster = join(places.clusters, `${CLUSTER_PREFIX}abc123`)
    const cgroup = places.cgroups && join(places.cgroups, `idem-lab-${dead}-1`)
    const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)', scratch.path], { stdio: 'ignore' })
    try {
      mkdirSync(join(scratch.path, 'run', 'idem-lab-abc123'), { recursive: true })
      mkdirSync(join(scratch.path, 'roster-of-the-test'))
      mkdirSync(join(cluster, 'data'), { recursive: true })
      writeFileSync(join(cluster, 'maker.pid'), `${dead}\n`)
      if (cgroup) mkdirSync(cgroup, { recursive: true })
      await new Promise((done) => sleeper.once('spawn', done))

      const left = await leftBehind([scratch.path], places)
      expect(left.processes).toEqual([expect.stringMatching(new RegExp(`^${sleeper.pid} `))])
      expect(left.tempFolders).toEqual([join(scratch.path, 'run', 'idem-lab-abc123')])
      expect(left.clusters).toEqual([cluster])
      expect(left.cgroups).toEqual(cgroup ? [cgroup] : [])
    } finally {
      sleeper.kill('SIGKILL')
      rmSync(cluster, { recursive: true, force: true })
      for (const dir of [cgroup, places.cgroups]) if (dir) rmdirSync(dir)
    }
    rmSync(join(scratch.path, 'run'), { recursive: true })
    expect(await leftBehind([scratch.path], places)).toEqual(NOTHING_LEFT)
    scratch.dispose()
    elsewhere.dispose()
  })
})
