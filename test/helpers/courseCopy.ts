// A copy of this course as an autograder platform holds it: the files git
// sees (tracked, or new and not ignored), without solutions/ (closed-book),
// and this checkout's installed node_modules linked in, as a platform's own
// `npm ci` would have installed it.
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, symlinkSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { repoRoot } from '#harness/paths.ts'

export function closedBookCopy(into: string): string {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: repoRoot, encoding: 'utf8' }).split('\0')
  for (const file of listed.filter((f) => f && !f.startsWith('solutions/') && existsSync(resolve(repoRoot, f)))) {
    mkdirSync(dirname(join(into, file)), { recursive: true })
    cpSync(resolve(repoRoot, file), join(into, file))
  }
  symlinkSync(resolve(repoRoot, 'node_modules'), join(into, 'node_modules'))
  return into
}
