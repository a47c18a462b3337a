// A system tool the grader runs (bubblewrap, util-linux's prlimit): found on
// PATH, or in /usr/bin and /bin, where Debian puts them, when PATH is bare.
import { accessSync, constants } from 'node:fs'
import { delimiter, join } from 'node:path'

/** The path of the executable `name`, or undefined when this machine has none. */
export function findExecutable(name: string): string | undefined {
  return [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/bin']
    .filter(Boolean)
    .map((dir) => join(dir, name))
    .find((file) => {
      try {
        accessSync(file, constants.X_OK)
        return true
      } catch {
        return false
      }
    })
}
