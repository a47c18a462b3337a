// Every random choice the grader makes comes from here: accounts, amounts,
// keys, the order of concurrent requests. One seed reproduces a whole run; each
// check gets its own stream derived from (seed, check id), so a check draws the
// same inputs whatever ran before it.
import { createHash } from 'node:crypto'
import { unsafeUniformIntDistribution, xoroshiro128plus, type RandomGenerator } from 'pure-rand'

export class Rng {
  private readonly gen: RandomGenerator
  private readonly digest = createHash('sha256')
  private count = 0

  constructor(seed: number, stream = '') {
    const h = createHash('sha256').update(`${seed}:${stream}`).digest()
    this.gen = xoroshiro128plus(h.readInt32LE(0) ^ h.readInt32LE(4))
  }

  /** Uniform integer in [min, max]. */
  int(min: number, max: number): number {
    const value = unsafeUniformIntDistribution(min, max, this.gen)
    this.digest.update(`${value},`)
    this.count++
    return value
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)]!
  }

  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items]
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(0, i)
      ;[out[i], out[j]] = [out[j]!, out[i]!]
    }
    return out
  }

  chance(p: number): boolean {
    return this.int(0, 999_999) < p * 1_000_000
  }

  /** A random amount of won, rounded like people write amounts. */
  amount(min = 1_000, max = 500_000): number {
    return Math.round(this.int(min, max) / 100) * 100 || min
  }

  /** A UUID-shaped idempotency key (version 4 layout), drawn from the seed. */
  uuid(): string {
    const hex = Array.from({ length: 32 }, () => this.int(0, 15).toString(16))
    hex[12] = '4'
    hex[16] = (8 + this.int(0, 3)).toString(16)
    const s = hex.join('')
    return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`
  }

  /** What was drawn so far, for proving two runs drew the same inputs. */
  trace(): { draws: number; digest: string } {
    return { draws: this.count, digest: this.digest.copy().digest('hex').slice(0, 16) }
  }
}

/** A fresh seed for a run that was not given one: small enough to type. */
export const newSeed = () => Math.floor(Math.random() * 1_000_000)
