// npm run starters:hash: regenerates grader/policing/starters.sha256 after a
// starter changed. Recognising an untouched stage by that list is
// harness/starterHashes.ts's, which the replay needs as much as the grader.
import { writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { repoRoot } from '#harness/paths.ts'
import { STARTER_HASHES, starterHashList } from '#harness/starterHashes.ts'

if (process.argv[1] && resolve(process.argv[1]) === resolve(repoRoot, 'grader', 'policing', 'starters.ts')) {
  writeFileSync(STARTER_HASHES, starterHashList())
  console.log(`wrote ${STARTER_HASHES}`)
}
