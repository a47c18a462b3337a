// What a run can leave behind, and the one assertion that it left nothing:
// no process, no temp folder, no PostgreSQL cluster folder, no pids cgroup.
//
// Processes and temp folders are attributed by a marker: the folder a test
// gives a run as its TMPDIR (or its LAB_DB), found in a process's environment
// or command line, and holding every temp folder the run makes. Clusters and
// cgroups live outside any such folder (as root, clusters are under /tmp and
// cgroups under the pids hierarchy), so they are attributed by their maker: a
// cluster folder or cgroup whose maker process is gone can never be removed
// by it, and is a leak whoever made it. Those already there when this file
// started (a run killed before this one) are not counted.
import { type Dirent, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { expect } from 'vitest'
import { PIDS_CGROUP_NAME, pidsHierarchy } from '#harness/limits.ts'
import { orphanedClusters } from '#harness/pgLeftovers.ts'
import { clusterBaseDir } from '#harness/postgres.ts'
import { leftoverAfter, pidAlive, processesWithMarker } from './procs.ts'

export type Leftovers = { processes: string[]; tempFolders: string[]; clusters: string[]; cgroups: string[] }

export const NOTHING_LEFT: Leftovers = { processes: [], tempFolders: [], clusters: [], cgroups: [] }

/** Where cluster folders and pids cgroups are made: the machine's places, or (for this helper's own test) private ones. */
export type Places = { clusters: string; cgroups: string | undefined }

const MACHINE: Places = { clusters: clusterBaseDir(), cgroups: pidsHierarchy()?.base }

/** The prefixes of every temp folder the grader, the bank's harness and the bench make (mkdtemp). */
const GRADER_TEMP = /^idem-(lab|pg|export|roster|bench)-/

const subfolders = (dir: string | undefined): Dirent[] => {
  if (!dir) return []
  try {
    return readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory())
  } catch {
    return []
  }
}

/** Pids cgroups (limits.ts names them idem-lab-<maker pid>-<n>) whose maker has exited. */
const orphanedCgroups = (base: string | undefined) =>
  subfolders(base)
    .filter((e) => !pidAlive(Number(PIDS_CGROUP_NAME.exec(e.name)?.[1] ?? process.pid)))
    .map((e) => join(base!, e.name))

const orphans = (places: Places) => ({ clusters: orphanedClusters(places.clusters), cgroups: orphanedCgroups(places.cgroups) })
const { clusters: clustersAtStart, cgroups: cgroupsAtStart } = orphans(MACHINE)
const atStart = new Set([...clustersAtStart, ...cgroupsAtStart])

/** The grader's temp folders anywhere under `dir` (a run's TMPDIR may be a folder inside a test's scratch). */
function tempFoldersUnder(dir: string, depth = 3): string[] {
  return subfolders(dir).flatMap((e) => (GRADER_TEMP.test(e.name) ? [join(dir, e.name)] : depth > 1 ? tempFoldersUnder(join(dir, e.name), depth - 1) : []))
}

/**
 * What the runs marked by `markers` (each a folder, or a tag in their command
 * lines) left behind, after giving their processes a moment to be reaped
 * (procs.ts). An orphaned cluster or cgroup is not waited for: nothing will
 * remove it.
 */
export async function leftBehind(markers: string[], places: Places = MACHINE): Promise<Leftovers> {
  const processes = (await leftoverAfter(() => markers.flatMap((marker) => processesWithMarker(marker)))).map((p) => `${p.pid} ${p.cmdline}`)
  const { clusters, cgroups } = orphans(places)
  return {
    processes,
    tempFolders: markers.flatMap((marker) => tempFoldersUnder(marker)),
    clusters: clusters.filter((path) => !atStart.has(path)),
    cgroups: cgroups.filter((path) => !atStart.has(path)),
  }
}

/** Asserts that the runs marked by `markers` left no process, temp folder, cluster or cgroup. */
export async function expectNothingLeft(what: string, ...markers: string[]): Promise<void> {
  expect(await leftBehind(markers), what).toEqual(NOTHING_LEFT)
}
