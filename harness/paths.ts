import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The root of this checkout of the course. */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..')
