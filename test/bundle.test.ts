// harness/bundle.mjs keeps `import.meta.url` per file, as tsx does: course
// code finds the repository from it (harness/paths.ts). That must also hold
// for a bundle built by a bundled command (the bench builds the grade probe's
// bundle; the grader builds the bank's), whose copy of bundle.mjs went through
// the same rewriting as every other file.
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { repoRoot } from '#harness/paths.ts'
import { bundle } from '#harness/bundle.mjs'
import { scratchDir } from './helpers/scratch.ts'

const scratch = scratchDir('bundle')
afterAll(() => scratch.dispose())

const run = (file: string) => spawnSync(process.execPath, [file], { encoding: 'utf8' })

describe('bundle()', () => {
  const reporter = join(scratch.path, 'whereAmI.ts')
  writeFileSync(reporter, 'console.log(import.meta.url)\n')

  it("gives each file its own import.meta.url, not the bundle's", async () => {
    const built = await bundle({ entry: `import ${JSON.stringify(reporter)}\n`, resolveDir: scratch.path, outBase: join(scratch.path, 'direct') })
    const out = run(built.file)
    expect(out.stdout.trim(), out.stderr).toBe(pathToFileURL(reporter).href)
  })

  it('does so in a bundle built by a bundled copy of itself', async () => {
    const builder = join(scratch.path, 'builder.ts')
    writeFileSync(
      builder,
      `import { bundle } from ${JSON.stringify(join(repoRoot, 'harness', 'bundle.mjs'))}
const built = await bundle({ entry: ${JSON.stringify(`import ${JSON.stringify(reporter)}\n`)}, resolveDir: ${JSON.stringify(scratch.path)}, outBase: ${JSON.stringify(join(scratch.path, 'inner'))} })
console.log(built.file)
`,
    )
    const outer = await bundle({ entry: `import ${JSON.stringify(builder)}\n`, resolveDir: scratch.path, outBase: join(scratch.path, 'outer') })
    const building = run(outer.file)
    expect(building.status, building.stderr).toBe(0)
    const inner = run(building.stdout.trim())
    expect(inner.stdout.trim(), inner.stderr).toBe(pathToFileURL(reporter).href)
  })
})
