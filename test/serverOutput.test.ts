// Output is evidence, never a reason to fail: a correct server that prints a
// lot before its "listening on" line still starts, and what the grader keeps
// of its output stays bounded (harness/serverLog.ts). The unit tests feed the
// log and the watch chunks as a pipe would deliver them; one test starts a
// real server process that prints megabytes first, the way the grader does.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { request } from 'undici'
import { afterEach, describe, expect, it } from 'vitest'
import { HEAD_BYTES, KeptLog, LINE_LIMIT, ListeningWatch, SETTLE_MS, TAIL_BYTES } from '#harness/serverLog.ts'
import { ServerProcess } from '#harness/spawnServer.ts'
import { scratchDir } from './helpers/scratch.ts'

const MiB = 1024 * 1024
const LINE = 'listening on http://127.0.0.1:43210 (stage x, pid 1)\n'

/** `bytes` of numbered log lines, with near misses of the listening line among them. */
function noise(bytes: number): string {
  const lines: string[] = []
  let size = 0
  for (let i = 0; size < bytes; i++) {
    const line = i % 50 === 0 ? `${i} listening on port soon, listening on http://localhost:1\n` : `${i} GET /warmup 200 ${'x'.repeat(40)}\n`
    lines.push(line)
    size += line.length
  }
  return lines.join('')
}

/** Cuts text into chunks of `size`, as reads from a pipe do (64 KiB is what Node reads at most). */
function chunks(text: string, size = 64 * 1024): string[] {
  const out: string[] = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

function feedAll(watch: ListeningWatch, text: string, stream = 'stdout', now = 0): void {
  for (const chunk of chunks(text)) watch.feed(stream, chunk, now)
}

describe('KeptLog: the head, the tail, and how much was dropped between them', () => {
  it('keeps a short output whole, with no marker', () => {
    const log = new KeptLog()
    log.append('starting\n')
    log.append(Buffer.from(LINE))
    expect(log.text()).toBe(`starting\n${LINE}`)
    expect(log.droppedBytes).toBe(0)
    expect(log.tail(1)).toBe(LINE.trimEnd())
  })

  it('keeps the output whole up to head + tail, across the cut between them', () => {
    const text = noise(HEAD_BYTES + TAIL_BYTES - 100).slice(0, HEAD_BYTES + TAIL_BYTES)
    const log = new KeptLog()
    for (const chunk of chunks(text, 1000)) log.append(chunk)
    expect(log.droppedBytes).toBe(0)
    expect(log.text()).toBe(text)
  })

  it('after 1 MiB: the first 16 KiB, the last 48 KiB, and a line with the exact count dropped', () => {
    const text = noise(MiB)
    const log = new KeptLog()
    for (const chunk of chunks(text, 7919)) log.append(chunk)
    const dropped = text.length - HEAD_BYTES - TAIL_BYTES
    expect(log.totalBytes).toBe(text.length)
    expect(log.droppedBytes).toBe(dropped)
    expect(log.keptBytes).toBe(HEAD_BYTES + TAIL_BYTES)
    const kept = log.text()
    const marker = `… ${dropped.toLocaleString('en-US')} bytes of server output dropped …`
    expect(kept.startsWith(text.slice(0, HEAD_BYTES))).toBe(true)
    expect(kept.endsWith(text.slice(-TAIL_BYTES))).toBe(true)
    expect(kept.split('\n')).toContain(marker)
    expect(kept.length).toBeLessThanOrEqual(HEAD_BYTES + TAIL_BYTES + marker.length + 2)
    // The last lines are the end of the output; reaching back far enough shows the marker too.
    expect(log.tail(3)).toBe(text.trimEnd().split('\n').slice(-3).join('\n'))
    expect(log.tail(100_000)).toContain(marker)
  })

  it('a chunk larger than the ring keeps only its end', () => {
    const log = new KeptLog(4, 8)
    log.append('abcd')
    log.append('0123456789ABCDEF')
    expect(log.text()).toBe('abcd\n… 8 bytes of server output dropped …\n89ABCDEF')
  })

  it('never cuts a character in two where bytes were dropped', () => {
    const log = new KeptLog(5, 5)
    // "é" is two bytes: the head's fifth byte and the tail's first are halves of one.
    log.append('abcdé-12345678é1234')
    const text = log.text()
    expect(text).not.toContain('\uFFFD')
    expect(text).toBe('abcd\n… 11 bytes of server output dropped …\n1234')
  })
})

describe('ListeningWatch: the line is found wherever it comes', () => {
  for (const size of [1 * MiB, 10 * MiB])
    it(`after ${size / MiB} MiB of noise, in 64 KiB chunks`, () => {
      const watch = new ListeningWatch()
      feedAll(watch, noise(size))
      expect(watch.address(0)).toBeUndefined()
      feedAll(watch, `${LINE}more noise\n`)
      expect(watch.address(0)).toBe('http://127.0.0.1:43210')
      expect(watch.keptChars).toBeLessThanOrEqual(LINE_LIMIT)
    })

  it('split across two chunks at every position, after 1 MiB of noise', () => {
    const before = noise(MiB)
    for (let cut = 1; cut < LINE.length; cut++) {
      const watch = new ListeningWatch()
      feedAll(watch, before + LINE.slice(0, cut))
      watch.feed('stdout', LINE.slice(cut), 1)
      expect(watch.address(1), `cut at ${cut}: ${JSON.stringify(LINE.slice(0, cut))}`).toBe('http://127.0.0.1:43210')
    }
  })

  it('a port cut short by a read is not taken for the whole port', () => {
    const watch = new ListeningWatch()
    watch.feed('stdout', 'noise\nlistening on http://127.0.0.1:43', 0)
    expect(watch.address(1)).toBeUndefined()
    watch.feed('stdout', '210\n', 2)
    expect(watch.address(2)).toBe('http://127.0.0.1:43210')
  })

  it('a line printed without its newline counts once the stream is quiet, or once it ends', () => {
    const quiet = new ListeningWatch()
    quiet.feed('stderr', 'listening on unix:/tmp/lab/s1.sock', 0)
    expect(quiet.address(SETTLE_MS - 1)).toBeUndefined()
    expect(quiet.settlesIn(SETTLE_MS - 1)).toBe(1)
    expect(quiet.address(SETTLE_MS)).toBe('unix:/tmp/lab/s1.sock')

    const ended = new ListeningWatch()
    ended.feed('stdout', 'listening on http://127.0.0.1:8080', 0)
    expect(ended.end('stdout', 0)).toBe(true)
    expect(ended.address(0)).toBe('http://127.0.0.1:8080')
  })

  it("stdout and stderr are split into lines each on its own: one does not cut the other's line", () => {
    const watch = new ListeningWatch()
    watch.feed('stdout', 'listening on http://127.0.0.1:', 0)
    watch.feed('stderr', '5000 warnings\n', 0)
    expect(watch.address(SETTLE_MS)).toBeUndefined()
    watch.feed('stdout', '4000\n', 0)
    expect(watch.address(0)).toBe('http://127.0.0.1:4000')
  })

  it('the first line counts; later ones do not move it', () => {
    const watch = new ListeningWatch()
    watch.feed('stdout', 'listening on http://127.0.0.1:1111\nlistening on http://127.0.0.1:2222\n', 0)
    expect(watch.feed('stdout', 'listening on http://127.0.0.1:3333\n', 0)).toBe(false)
    expect(watch.address(0)).toBe('http://127.0.0.1:1111')
  })

  it('a 5 MiB line without a newline holds no more than the caps, and the line after it is found', () => {
    const watch = new ListeningWatch()
    const log = new KeptLog()
    for (const chunk of chunks('y'.repeat(5 * MiB))) {
      watch.feed('stdout', chunk, 0)
      log.append(chunk)
      expect(watch.keptChars).toBeLessThanOrEqual(LINE_LIMIT)
      expect(log.keptBytes).toBeLessThanOrEqual(HEAD_BYTES + TAIL_BYTES)
    }
    expect(log.text().length).toBeLessThan(HEAD_BYTES + TAIL_BYTES + 100)
    // The listening line at the end of that endless line is still found.
    watch.feed('stdout', 'zzz listening on http://127.0.0.1:7 ok', 0)
    expect(watch.address(0)).toBe('http://127.0.0.1:7')
  })
})

/**
 * A server of its own (`--server CMD`): prints `mib` MiB of junk, an eighth of
 * it on stderr, then listens on a free port. Started a second time (the marker
 * file exists), it exits before listening.
 */
const SERVER = `
import { createServer } from 'node:http'
import { existsSync, writeFileSync } from 'node:fs'
const [mib, marker] = [Number(process.argv[2]), process.argv[3]]
if (existsSync(marker)) {
  console.error('second start: not listening this time')
  process.exit(3)
}
writeFileSync(marker, '')
const block = ('junk '.repeat(15) + 'j\\n').repeat(900).slice(0, 65536)
const write = (stream, text) => new Promise((resolve) => (stream.write(text) ? resolve() : stream.once('drain', resolve)))
for (let i = 0; i < mib * 16; i++) await write(i % 8 === 0 ? process.stderr : process.stdout, block)
const server = createServer((req, res) => {
  res.writeHead(req.url === '/health' ? 200 : 404, { 'content-type': 'text/plain' })
  res.end(req.url === '/health' ? 'ok' : 'not found')
})
server.listen(0, '127.0.0.1', () => console.log('listening on http://127.0.0.1:' + server.address().port + ' (flood test)'))
process.on('SIGTERM', () => server.close(() => process.exit(0)))
`

describe('a real server that prints 2 MiB before it listens', () => {
  const cleanups: (() => Promise<void> | void)[] = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })

  it('starts, answers at the url it printed, keeps a bounded log, and a restart does not find the old line', async () => {
    const scratch = scratchDir('server-output')
    cleanups.push(() => scratch.dispose())
    const script = join(scratch.path, 'server.mjs')
    writeFileSync(script, SERVER)
    const mib = 2
    const server = new ServerProcess({
      stageDir: scratch.path,
      dbPath: join(scratch.path, 'bank.db'),
      adminToken: 'flood-test',
      command: { line: `node server.mjs ${mib}`, argv: [process.execPath, script, String(mib), join(scratch.path, 'started')], cwd: scratch.path },
      startTimeoutMs: 60_000,
    })
    cleanups.push(() => server.stop())

    await server.start()
    console.log(`serverOutput.test.ts: a server printing ${mib} MiB before its line was seen as started after ${server.lastStartMs} ms`)
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    const health = await request(`${server.url}/health`)
    expect(health.statusCode).toBe(200)
    await health.body.text()
    const log = server.logTail(100_000)
    expect(log).toMatch(/^… [\d,]+ bytes of server output dropped …$/m)
    expect(log.length).toBeLessThan(HEAD_BYTES + TAIL_BYTES + 100)

    await server.stop()
    await expect(server.start()).rejects.toThrow(/exited with code 3 before it listened[\s\S]*second start: not listening this time/)
  })
})
