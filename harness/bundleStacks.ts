// Stack traces of a bundle (bundle.mjs) name the TypeScript files and lines
// it was built from: a frame in a file with a source map beside it
// (`bank.cjs.map`) is mapped back through it. A map is read the first time a
// stack reaches its file, and never when nothing fails. (Node's
// --enable-source-maps does the same, but reads every map as its file loads:
// a tenth of a server's start.) Imported first by every bundle's entry.
import { readFileSync } from 'node:fs'
import { SourceMap, type SourceMapping } from 'node:module'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/** Each file's source map, or null when it has none: read once. */
const maps = new Map<string, SourceMap | null>()

function sourceMap(file: string): SourceMap | null {
  let map = maps.get(file)
  if (map === undefined) {
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')))
    } catch {
      map = null // no map: its frames stay as they are
    }
    maps.set(file, map)
  }
  return map
}

/** "fn (file:line:col)", or "file:line:col", in the TypeScript file when the frame is in a bundle. */
function frame(site: NodeJS.CallSite): string {
  const name = site.getFileName()
  const line = site.getLineNumber()
  const column = site.getColumnNumber()
  const file = name?.startsWith('file://') ? fileURLToPath(name) : name
  // Only bundles have maps beside them; a file of Node's own or of a package is left as it is.
  const map = file && line && column && /\.[cm]js$/.test(file) ? sourceMap(file) : null
  // An empty object where the map has nothing for that place.
  const entry = map?.findEntry(line! - 1, column! - 1) as Partial<SourceMapping> | undefined
  if (!entry?.originalSource || entry.originalLine === undefined || entry.originalColumn === undefined) return site.toString()
  const where = `${resolve(dirname(file!), entry.originalSource)}:${entry.originalLine + 1}:${entry.originalColumn + 1}`
  const fn = site.getFunctionName() ?? site.getMethodName()
  const async = site.isAsync() ? 'async ' : ''
  return fn ? `${async}${fn} (${where})` : `${async}${where}`
}

Error.prepareStackTrace = (error, sites) => `${String(error)}${sites.map((site) => `\n    at ${frame(site)}`).join('')}`
