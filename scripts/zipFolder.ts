// node harness/launch.mjs scripts/zipFolder.ts FOLDER OUT.zip: a zip of
// FOLDER's files at the archive's root, with Node's own zlib, for
// gradescope/build.sh on a machine without the `zip` command (the course adds
// no dependency for it). Deflated entries, file modes kept (run_autograder
// stays executable), no zip64: an autograder zip is far below 4 GB.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { crc32, deflateRawSync } from 'node:zlib'

const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.isFile() ? [join(dir, e.name)] : []))

/** The entries' local headers and data, then the central directory that lists them (PKWARE APPNOTE 4.3). */
export function zipFolder(folder: string): Buffer {
  const locals: Buffer[] = []
  const centrals: Buffer[] = []
  let offset = 0
  for (const path of files(folder)) {
    const name = Buffer.from(relative(folder, path).split('\\').join('/'))
    const data = readFileSync(path)
    const packed = deflateRawSync(data)
    const common = Buffer.alloc(26)
    common.writeUInt16LE(20, 0) // version needed: 2.0
    common.writeUInt16LE(0x0800, 2) // names are UTF-8
    common.writeUInt16LE(8, 4) // deflate
    common.writeUInt32LE(0x21_0000, 6) // DOS time and date: 1980-01-01, so a zip is the same for the same files
    common.writeUInt32LE(crc32(data), 10)
    common.writeUInt32LE(packed.length, 14)
    common.writeUInt32LE(data.length, 18)
    common.writeUInt16LE(name.length, 22)
    const local = Buffer.concat([u32(0x04034b50), common, name, packed])
    // After the fields it shares with the local header: comment length, disk, internal and external attributes, offset.
    const central = Buffer.alloc(14)
    central.writeUInt32LE(((statSync(path).mode & 0o777) | 0o100000) * 0x10000, 6) // external attributes: a regular file's Unix mode
    central.writeUInt32LE(offset, 10)
    centrals.push(Buffer.concat([u32(0x02014b50), u16(0x0314), common, central, name]))
    locals.push(local)
    offset += local.length
  }
  const directory = Buffer.concat(centrals)
  const end = Buffer.alloc(18)
  end.writeUInt16LE(centrals.length, 4)
  end.writeUInt16LE(centrals.length, 6)
  end.writeUInt32LE(directory.length, 8)
  end.writeUInt32LE(offset, 12)
  return Buffer.concat([...locals, directory, u32(0x06054b50), end])
}

const u32 = (n: number) => Buffer.from(Uint32Array.of(n).buffer)
const u16 = (n: number) => Buffer.from(Uint16Array.of(n).buffer)

const [folder, out] = process.argv.slice(2)
if (!folder || !out) {
  console.error('usage: node harness/launch.mjs scripts/zipFolder.ts FOLDER OUT.zip')
  process.exit(2)
}
writeFileSync(out, zipFolder(folder))
