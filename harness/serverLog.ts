// A server's output, read as it streams: whatever it prints, and however
// much, is evidence, never a reason to fail it. Two things are taken from it:
//
// - its "listening on" line, found wherever it comes, after any amount of
//   output (ListeningWatch): each stream is scanned line by line as it
//   arrives, keeping only its unfinished last line, itself capped;
// - what a failure message shows of it (KeptLog): its first bytes and its
//   last ones, with the count of those dropped in between.
//
// Both do work in proportion to the chunk they are given, never to what came
// before it, and hold a fixed amount of memory: a server that floods its
// output neither fills the grader's memory nor slows its verdict.
import { StringDecoder } from 'node:string_decoder'

/** The line a server prints once it accepts connections (CONTRACT.md; anything may come before or after it on its line). */
export const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+|unix:\S+)/

/**
 * The longest unfinished line a stream keeps: a "listening on" match is never
 * this long, so keeping the end of a longer line still finds one at its end,
 * and a server printing one endless line holds no more than this.
 */
export const LINE_LIMIT = 4 * 1024

/**
 * How long a match at the very end of an unfinished line waits for more output
 * before it counts: ":30" may be the start of ":3000" that a pipe delivers in
 * two reads, but a server may also print the line without its newline.
 */
export const SETTLE_MS = 200

/** One stream's lines (stdout or stderr: their lines interleave, so each is split on its own). */
class StreamLines {
  /** Decodes across chunks: a character cut in two by a read is not lost. */
  private readonly decoder = new StringDecoder('utf8')
  /** The unfinished last line (its end only, when longer than LINE_LIMIT). */
  private partial = ''
  /** A match at the end of the unfinished line, which more output could still lengthen; `at`: when it was seen. */
  pending: { address: string; at: number } | undefined

  get keptChars(): number {
    return this.partial.length
  }

  /** The address of a "listening on" match that is final: in a finished line, or followed by more of its line. */
  feed(chunk: Buffer | string, now: number): string | undefined {
    return this.scan(this.partial + (typeof chunk === 'string' ? chunk : this.decoder.write(chunk)), now)
  }

  /** The stream closed: its unfinished line is finished (a pending match counts). */
  end(now: number): string | undefined {
    return this.scan(`${this.partial}${this.decoder.end()}\n`, now)
  }

  private scan(text: string, now: number): string | undefined {
    const lineEnd = text.lastIndexOf('\n')
    const match = LISTENING.exec(text)
    this.partial = text.length - lineEnd - 1 > LINE_LIMIT ? text.slice(-LINE_LIMIT) : text.slice(lineEnd + 1)
    this.pending = undefined
    if (!match) return undefined
    // The match stops at a newline, a space or a non-digit: it cannot grow any more.
    if (match.index < lineEnd || match.index + match[0].length < text.length) return match[1]
    this.pending = { address: match[1]!, at: now }
    return undefined
  }
}

/**
 * Finds a process's "listening on" line in its output streams. One watch per
 * process: a restarted server gets a new one, so the line its previous
 * process printed is never found again.
 */
export class ListeningWatch {
  private readonly streams = new Map<string, StreamLines>()
  private found: string | undefined

  /** Reads a chunk of one stream; true when it changed what address() says (worth waking a waiting start). */
  feed(stream: string, chunk: Buffer | string, now = performance.now()): boolean {
    if (this.found !== undefined) return false
    const lines = this.lines(stream)
    const before = lines.pending
    this.found = lines.feed(chunk, now)
    return this.found !== undefined || lines.pending !== before
  }

  /** One stream ended (the process exited or closed it). */
  end(stream: string, now = performance.now()): boolean {
    if (this.found !== undefined) return false
    this.found = this.lines(stream).end(now)
    return this.found !== undefined
  }

  /** "http://127.0.0.1:PORT" or "unix:PATH" once the line was printed; undefined until then. */
  address(now = performance.now()): string | undefined {
    if (this.found !== undefined) return this.found
    for (const lines of this.streams.values()) if (lines.pending && now - lines.pending.at >= SETTLE_MS) return lines.pending.address
    return undefined
  }

  /** Milliseconds until a pending match counts, if there is one: a start waiting for the line looks again then. */
  settlesIn(now = performance.now()): number | undefined {
    const waits = [...this.streams.values()].flatMap((lines) => (lines.pending ? [SETTLE_MS - (now - lines.pending.at)] : []))
    return waits.length ? Math.max(0, Math.min(...waits)) : undefined
  }

  /** Characters held for unfinished lines (at most LINE_LIMIT per stream). */
  get keptChars(): number {
    let sum = 0
    for (const lines of this.streams.values()) sum += lines.keptChars
    return sum
  }

  private lines(stream: string): StreamLines {
    let lines = this.streams.get(stream)
    if (!lines) this.streams.set(stream, (lines = new StreamLines()))
    return lines
  }
}

/** What start-up failures need: how it began (a banner, the first error) and how it ended (the last lines). */
export const HEAD_BYTES = 16 * 1024
export const TAIL_BYTES = 48 * 1024

/**
 * What is kept of a server's output for failure messages: its first
 * HEAD_BYTES and its last TAIL_BYTES (a ring), in fixed buffers, and the
 * count of the bytes dropped between them, which text() shows as a line of
 * its own. Kept across restarts of one server, like a terminal would.
 */
export class KeptLog {
  private readonly head: Buffer
  private headLength = 0
  private readonly ring: Buffer
  /** Where the ring's next byte goes, and how many of its bytes are in use. */
  private ringEnd = 0
  private ringLength = 0
  private total = 0

  constructor(headBytes = HEAD_BYTES, tailBytes = TAIL_BYTES) {
    this.head = Buffer.alloc(headBytes)
    this.ring = Buffer.alloc(tailBytes)
  }

  /** Every byte the server printed, dropped ones included. */
  get totalBytes(): number {
    return this.total
  }

  get droppedBytes(): number {
    return this.total - this.headLength - this.ringLength
  }

  /** Bytes held (at most headBytes + tailBytes, whatever was printed). */
  get keptBytes(): number {
    return this.headLength + this.ringLength
  }

  append(chunk: Buffer | string): void {
    let bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    this.total += bytes.length
    if (this.headLength < this.head.length) {
      const copied = bytes.copy(this.head, this.headLength)
      this.headLength += copied
      bytes = bytes.subarray(copied)
    }
    // Only the chunk's last ring-full can survive: copy nothing more.
    const size = this.ring.length
    if (bytes.length >= size) {
      bytes.copy(this.ring, 0, bytes.length - size)
      this.ringEnd = 0
      this.ringLength = size
      return
    }
    const first = bytes.copy(this.ring, this.ringEnd)
    bytes.copy(this.ring, 0, first)
    this.ringEnd = (this.ringEnd + bytes.length) % size
    this.ringLength = Math.min(size, this.ringLength + bytes.length)
  }

  /** The kept output as text; when bytes were dropped, a line says how many, between the head and the tail. */
  text(): string {
    const head = this.head.subarray(0, this.headLength)
    const tail =
      this.ringLength < this.ring.length
        ? this.ring.subarray(0, this.ringLength)
        : Buffer.concat([this.ring.subarray(this.ringEnd), this.ring.subarray(0, this.ringEnd)])
    const dropped = this.droppedBytes
    // Nothing dropped: head and tail are one run of bytes, decoded as one.
    if (dropped === 0) return Buffer.concat([head, tail]).toString('utf8')
    // The cuts may fall inside a character: the head ends before it, the tail starts after it.
    const headText = new StringDecoder('utf8').write(head)
    let start = 0
    while (start < 3 && start < tail.length && (tail[start]! & 0xc0) === 0x80) start++
    const separator = headText === '' || headText.endsWith('\n') ? '' : '\n'
    return `${headText}${separator}… ${dropped.toLocaleString('en-US')} bytes of server output dropped …\n${tail.subarray(start).toString('utf8')}`
  }

  /** The last `lines` lines of text() (the dropped-bytes line among them, when they reach back that far). */
  tail(lines: number): string {
    return this.text().trimEnd().split('\n').slice(-lines).join('\n')
  }
}
