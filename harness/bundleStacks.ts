// Stack traces of a bundle (bundle.ts) name the TypeScript files and lines
// it was built from: the frames in the bundle are mapped back through its
// source map, which is read the first time an error's stack is, and never
// when nothing fails. (Node's --enable-source-maps does the same, but reads
// every map as its file loads: a tenth of a server's start.) Imported first
// by every bundle's entry.
import { readFileSync } from 'node:fs'
import { SourceMap, type SourceMapping } from 'node:module'
import { dirname, resolve } from 'node:path'

/** The bundle: the script node was started with. */
const bundleFile = process.argv[1] ? resolve(process.argv[1]) : undefined
let map: SourceMap | null | undefined

function sourceMap(): SourceMap | null {
  if (map !== undefined) return map
  try {
    map = new SourceMap(JSON.parse(readFileSync(`${bundleFile}.map`, 'utf8')))
  } catch {
    map = null // no map: frames stay as they are
  }
  return map
}

/** "fn (file:line:col)", or "file:line:col", in the TypeScript file when the frame is in the bundle. */
function frame(site: NodeJS.CallSite): string {
  const file = site.getFileName()
  const line = site.getLineNumber()
  const column = site.getColumnNumber()
  const inBundle = file && line && column && file.replace(/^file:\/\//, '') === bundleFile
  // An empty object where the map has nothing for that place.
  const entry = inBundle ? (sourceMap()?.findEntry(line - 1, column - 1) as Partial<SourceMapping> | undefined) : undefined
  if (!entry?.originalSource || entry.originalLine === undefined || entry.originalColumn === undefined) return site.toString()
  const where = `${resolve(dirname(bundleFile!), entry.originalSource)}:${entry.originalLine + 1}:${entry.originalColumn + 1}`
  const name = site.getFunctionName() ?? site.getMethodName()
  const async = site.isAsync() ? 'async ' : ''
  return name ? `${async}${name} (${where})` : `${async}${where}`
}

Error.prepareStackTrace = (error, sites) => `${String(error)}${sites.map((site) => `\n    at ${frame(site)}`).join('')}`
