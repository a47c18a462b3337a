// One bundle of TypeScript, built with esbuild: what lets the course's
// commands, a graded server and a learner-code child start with plain
// `node`, in a fraction of the time `node --import tsx` takes to compile the
// same files again in every fresh process. (esbuild is what tsx compiles
// with; bundling does the compiling once, ahead of the processes.)
//
// Plain JavaScript, checked by tsc through its JSDoc: launch.mjs, which
// starts every command, needs it before anything is compiled.
//
// What stays the same as under tsx:
//   - npm packages are not bundled: each import of one becomes a require of
//     the file Node would load from node_modules, by its absolute path, so a
//     bundle runs from any folder (a grading's temporary one);
//   - `import.meta.url` is the URL of the file that wrote it, not the bundle's;
//   - errors name the TypeScript files and lines (bundleStacks.ts reads the
//     bundle's source map when a stack is), and a compile error is reported
//     as tsx reports one: "file:line:col: ERROR: message".
// What it adds: `readable`, when given, is every folder (or file) the bundle
// may read from; an import of anything else is a compile error. A graded
// server's bundle is built by the grader, outside the sandbox, so it must not
// read what the sandbox would keep from the learner's code (solutions/).
//
// CommonJS starts faster than an ES module (a tenth of a server's start);
// code that needs an ES module (a top-level await, a package with no
// CommonJS entry) is built as one.
import { readFileSync, realpathSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { isBuiltin } from 'node:module'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import * as esbuild from 'esbuild'

/**
 * @typedef {object} BundleSpec
 * @property {string} entry The entry module's source (TypeScript); its relative imports resolve from `resolveDir`.
 * @property {string} resolveDir
 * @property {string} outBase The bundle's path without its extension (`.cjs` or `.mjs` is added); the source map is written beside it.
 * @property {string[]} [readable] Folders and files the bundle may read, if it is confined (real paths: esbuild follows links).
 */

/** A bundle that did not build: each error as "file:line:col: ERROR: message", the form tsx prints. */
export class BundleError extends Error {}

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const STACKS = join(root, 'harness', 'bundleStacks.ts')
/** The course's node_modules, and where it really is when it is a link (a worktree's, a closed-book copy's). */
const MODULES = join(root, 'node_modules')

/**
 * A package file by its path under the course's node_modules: a sandbox
 * binds node_modules there, so the folder a link points to does not exist
 * inside it.
 * @param {string} file
 */
function underModules(file) {
  let real
  try {
    real = realpathSync(MODULES)
  } catch {
    return file
  }
  return file.startsWith(real + sep) ? MODULES + file.slice(real.length) : file
}

/** @param {string} specifier A package name (`zod`, `@scope/x`, `pg/lib/x`), as opposed to a path, a `#alias` or a Node builtin. */
const isPackage = (specifier) => /^[^./#]/.test(specifier) && !isBuiltin(specifier)

/** @param {string[]} roots @param {string} path */
const inside = (roots, path) => roots.some((root) => path === root || path.startsWith(root + sep))

/**
 * Whether Node loads `file` as an ES module: .mjs, or .js under a package.json that says "type": "module".
 * @param {string} file
 * @returns {boolean}
 */
function isEsModule(file) {
  if (file.endsWith('.mjs')) return true
  if (!file.endsWith('.js')) return false
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    try {
      return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).type === 'module'
    } catch {
      // No package.json here: the next folder up decides.
    }
  }
  return false
}

let holders = 0

/**
 * Keeps esbuild's service (a process of its own) between builds until the
 * returned function is called; the last holder to let go stops it, so that
 * a long-lived process (a watch, a test worker) keeps no bundler between
 * grades. A grade holds it from start to end.
 * @returns {() => Promise<void>}
 */
export function holdBundler() {
  holders++
  let released = false
  return async () => {
    if (released) return
    released = true
    if (--holders === 0) await esbuild.stop()
  }
}

/**
 * Builds the bundle; returns its path, and the files it was built from.
 * @param {BundleSpec} spec
 * @returns {Promise<{ file: string, inputs: string[] }>}
 */
export async function bundle(spec) {
  const cjs = await build(spec, 'cjs')
  if (!(cjs instanceof BundleError)) return cjs
  const esm = await build(spec, 'esm')
  if (esm instanceof BundleError) throw esm
  return esm
}

/**
 * @param {BundleSpec} spec
 * @param {'cjs' | 'esm'} format
 * @returns {Promise<{ file: string, inputs: string[] } | BundleError>}
 */
async function build(spec, format) {
  const outfile = `${spec.outBase}.${format === 'cjs' ? 'cjs' : 'mjs'}`
  try {
    const result = await esbuild.build({
      stdin: { contents: `import ${JSON.stringify(STACKS)}\n${spec.entry}`, resolveDir: spec.resolveDir, sourcefile: 'entry.ts', loader: 'ts' },
      outfile,
      bundle: true,
      platform: 'node',
      format,
      target: `node${process.versions.node.split('.')[0]}`,
      sourcemap: 'linked',
      sourcesContent: false,
      metafile: true,
      logLevel: 'silent',
      plugins: [resolution(format, spec.readable && [...spec.readable, STACKS])],
    })
    const inputs = Object.keys(result.metafile.inputs)
      .filter((input) => !input.startsWith('<stdin>'))
      .map((input) => resolve(input))
    return { file: outfile, inputs }
  } catch (error) {
    const failure = /** @type {esbuild.BuildFailure} */ (error)
    if (!Array.isArray(failure.errors)) throw error
    return new BundleError(failure.errors.map(describe).join('\n'))
  }
}

/**
 * esbuild names a file relative to the working folder: the path is made whole, as a stack trace's is.
 * @param {esbuild.Message} message
 */
function describe(message) {
  const where = message.location
  return where ? `${resolve(where.file)}:${where.line}:${where.column + 1}: ERROR: ${message.text}` : `ERROR: ${message.text}`
}

/** `import.meta.url`, as a pattern: see resolution()'s onLoad. */
const IMPORT_META_URL = /\bimport\.meta\.url\b/
const IMPORT_META_URL_ALL = new RegExp(IMPORT_META_URL.source, 'g')

/**
 * Packages by their absolute path (the entry a `require` or an `import`
 * would load, as the format asks), everything else checked against
 * `readable`, and `import.meta.url` kept per file.
 * @param {'cjs' | 'esm'} format
 * @param {string[] | undefined} readable
 * @returns {esbuild.Plugin}
 */
function resolution(format, readable) {
  return {
    name: 'lab-resolution',
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData === 'resolving' || args.kind === 'entry-point') return undefined
        const kind = isPackage(args.path) ? (format === 'cjs' ? 'require-call' : 'import-statement') : args.kind
        const found = await build.resolve(args.path, { kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: 'resolving' })
        if (found.errors.length > 0) return { errors: found.errors }
        // Node before 20.19 cannot require() an ES module: such a package makes the bundle one too.
        if (format === 'cjs' && isPackage(args.path) && isEsModule(found.path)) return { errors: [{ text: `${args.path} is an ES module` }] }
        if (found.external || isPackage(args.path)) return { path: isPackage(args.path) ? underModules(found.path) : found.path, external: true }
        if (readable && !inside(readable, found.path))
          return {
            errors: [{ text: `${args.path} is ${relative(args.resolveDir, found.path)}, which this code may not read (it may read ${readable.join(', ')})` }],
          }
        return { path: found.path }
      })
      build.onLoad({ filter: /\.([cm]?ts|mjs)$/ }, async (args) => {
        const text = await readFile(args.path, 'utf8')
        // On the first line, so that every line keeps its number.
        // A pattern, never the words themselves: this file is bundled too (into every command that builds
        // bundles), and its own source passes through here.
        const contents = IMPORT_META_URL.test(text)
          ? `var __labImportMetaUrl = ${JSON.stringify(pathToFileURL(args.path).href)}; ${text.replace(IMPORT_META_URL_ALL, '__labImportMetaUrl')}`
          : text
        return { contents, loader: args.path.endsWith('.mjs') ? 'js' : 'ts' }
      })
    },
  }
}
