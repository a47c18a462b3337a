// Every command of the course starts here (package.json's scripts):
//   node harness/launch.mjs grader/cli/grade.ts 3 --seed 7
// runs grader/cli/grade.ts with the arguments after it. Each command is
// compiled once per version of its sources (bundle.mjs), into
// .lab/build/commands/, and every later run loads that bundle with plain
// node: a command starts in a fraction of the time tsx takes to compile the
// grader again in every process. A source changed since (any file the bundle
// was built from, this launcher or the compiler) is compiled anew.
//
// Plain JavaScript: it runs before anything is compiled.
import { createHash } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { basename, dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { BundleError, bundle } from './bundle.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const store = join(root, '.lab', 'build', 'commands')

/** @param {string} file */
const digest = (file) => {
  try {
    return createHash('sha256').update(readFileSync(file)).digest('hex')
  } catch {
    return 'missing'
  }
}

/** What every bundle also depends on: this file, the compiler, the Node line and esbuild. */
const toolchain = () =>
  [fileURLToPath(import.meta.url), join(root, 'harness', 'bundle.mjs'), join(root, 'package-lock.json')].map(digest).join(' ') +
  ` node${process.versions.node.split('.')[0]}`

/**
 * The command's bundle, compiled now if its sources changed since the last one.
 * @param {string} entry The command's TypeScript file, relative to the course root.
 * @returns {Promise<string>}
 */
export async function commandBundle(entry) {
  const name = entry.replace(/\.ts$/, '').replace(/[/\\]/g, '-')
  const manifest = join(store, `${name}.json`)
  try {
    /** @type {{ file: string, toolchain: string, inputs: Record<string, string> }} */
    const last = JSON.parse(readFileSync(manifest, 'utf8'))
    if (last.toolchain === toolchain() && Object.entries(last.inputs).every(([file, sum]) => digest(file) === sum)) return last.file
  } catch {
    // None yet, or unreadable: compiled below.
  }
  mkdirSync(store, { recursive: true })
  const unique = `${name}-${process.pid}-${Date.now().toString(36)}`
  const built = await bundle({ entry: `import ${JSON.stringify(resolve(root, entry))}\n`, resolveDir: root, outBase: join(store, unique) })
  const inputs = Object.fromEntries(built.inputs.map((file) => [file, digest(file)]))
  // Written whole, then renamed: another command starting meanwhile reads the old manifest or the new, never half of one.
  writeFileSync(`${manifest}.${process.pid}`, JSON.stringify({ file: built.file, toolchain: toolchain(), inputs }))
  renameSync(`${manifest}.${process.pid}`, manifest)
  prune(name, built.file)
  return built.file
}

/**
 * Older bundles of the command, but the one just written and the one before
 * it (a command started a moment ago may still read its source map).
 * @param {string} name
 * @param {string} keep
 */
function prune(name, keep) {
  const bundles = readdirSync(store)
    .filter((f) => f.startsWith(`${name}-`) && /\.[cm]js$/.test(f))
    .map((f) => join(store, f))
    .filter((f) => f !== keep)
  // Oldest first by when written: names hold a pid, and pids do not sort by time.
  const written = (/** @type {string} */ f) => statSync(f, { throwIfNoEntry: false })?.mtimeMs ?? 0
  bundles.sort((a, b) => written(a) - written(b))
  for (const old of bundles.slice(0, -1)) for (const f of [old, `${old}.map`]) rmSync(f, { force: true })
}

/**
 * Runs the command with `args`, as `node --import tsx entry args` would.
 * @param {string} entry
 * @param {string[]} args
 */
export async function launch(entry, args) {
  let file
  try {
    file = await commandBundle(entry)
  } catch (error) {
    if (!(error instanceof BundleError)) throw error
    console.error(`${entry} does not compile:\n${error.message}`)
    process.exit(2)
  }
  // argv as `node --import tsx entry args` sets it: the command is its TypeScript file, wherever it was compiled to.
  process.argv = [process.argv[0] ?? process.execPath, resolve(root, entry), ...args]
  if (file.endsWith('.cjs')) createRequire(import.meta.url)(file)
  else await import(pathToFileURL(file).href)
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [entry, ...args] = process.argv.slice(2)
  if (!entry) {
    console.error(`usage: node ${basename(process.argv[1])} <command.ts> [arguments...]`)
    process.exit(2)
  }
  await launch(entry, args)
}
