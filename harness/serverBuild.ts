// A graded bank as one bundle: bank/run.ts and the stage's idempotency.ts
// with everything they import from the course (bundle.ts), built once per
// grade and started by every server of that grade with plain `node`. Under
// tsx each of those processes compiled the same files again, which cost most
// of a start. The bundle may import only what the stage's code may read
// (stageReach.ts): the grader builds it outside the sandbox.
import { join, resolve } from 'node:path'
import { bundle } from './bundle.mjs'
import { repoRoot } from './paths.ts'
import { stageReach } from './stageReach.ts'

/**
 * Builds the bank with `stageDir`'s layer (the code of stage `stage`) into
 * `outDir`, and returns the bundle's path. A compile error, or an import of
 * a file the stage may not read, throws a BundleError naming file and line.
 */
export async function buildServer(o: { stage: number; stageDir: string; outDir: string }): Promise<string> {
  const layer = JSON.stringify(resolve(o.stageDir, 'idempotency.ts'))
  const run = JSON.stringify(resolve(repoRoot, 'bank/run.ts'))
  const built = await bundle({
    // A failure to start (a layer that throws while it is created) is printed, with its stack, and ends the process.
    entry: `import { createLayer } from ${layer}\nimport { runBank } from ${run}\nrunBank(createLayer).catch((error) => {\n  console.error(error)\n  process.exit(1)\n})\n`,
    resolveDir: o.stageDir,
    outBase: join(o.outDir, 'bank'),
    readable: stageReach(o.stage, [o.stageDir]),
  })
  return built.file
}
