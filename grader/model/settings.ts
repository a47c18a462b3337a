// The settings some histories of a grade run at instead of the bank's
// defaults (a 30 s lease, a 24 h TTL, both whole seconds). A promise whose
// value depends on them is only ever seen at round values otherwise: the
// published policy's rounding (ttl floored, lease ceiled), Retry-After's, a
// lease shorter than a second, a TTL shorter than the lease (the claim then
// outlives its key until the lease runs out), a purge interval of min(TTL, 60 s).
import type { Rng } from '#harness/rng.ts'
import type { Periods } from './contract.ts'

/** A lease, drawn from one class: under a second, seconds and a fraction, or minutes and a fraction. */
const LEASES = {
  'under a second': (rng: Rng) => rng.int(100, 999),
  'seconds and a fraction': (rng: Rng) => rng.int(1, 9) * 1_000 + rng.int(1, 999),
  long: (rng: Rng) => rng.int(2, 60) * 60_000 + rng.int(1, 999),
} as const

/** A TTL, given the lease: longer by seconds and a fraction, shorter than the lease, or days and a fraction. */
const TTLS = {
  'the lease and seconds more': (rng: Rng, leaseMs: number) => leaseMs + rng.int(1, 9) * 1_000 + rng.int(1, 999),
  'shorter than the lease': (rng: Rng, leaseMs: number) => Math.max(1, Math.floor(leaseMs / rng.int(2, 4)) - rng.int(0, 50)),
  long: (rng: Rng) => rng.int(2, 30) * 86_400_000 + rng.int(1, 999),
} as const

export type DrawnPeriods = Periods & { classes: { lease: keyof typeof LEASES; ttl: keyof typeof TTLS | 'default' } }

/**
 * The periods of `rounds` rounds of histories, each of its own classes: the
 * first round's lease is under a second, the next ones' drawn from the other
 * classes, so that every grade meets a lease that is not whole seconds; with
 * keys that expire, each round's TTL is of another class than the last, and
 * where there are two rounds or more (stage 5) the first one's is shorter than
 * its lease: a claim outlives its key, which a purge must spare. Stage 6's one
 * round draws its class, so that its grades meet all three; its purge's lease
 * is judged by stage 5's in-flight-across-ttl, which its grade runs too.
 */
export function drawnPeriods(rng: Rng, rounds: number, ttl: boolean, defaultTtlMs: number): DrawnPeriods[] {
  const leaseClasses = Object.keys(LEASES) as Array<keyof typeof LEASES>
  const classes = Object.keys(TTLS) as Array<keyof typeof TTLS>
  const claimOutlivesKey = 'shorter than the lease' as const
  // Drawn even where keys never expire: the leases after it keep their place in the seed's sequence.
  const ttlClasses = ttl && rounds > 1 ? [claimOutlivesKey, ...rng.shuffle(classes.filter((c) => c !== claimOutlivesKey))] : rng.shuffle(classes)
  return Array.from({ length: rounds }, (_, i) => {
    const lease = i === 0 ? leaseClasses[0]! : rng.pick(leaseClasses.slice(1))
    const leaseMs = LEASES[lease](rng)
    if (!ttl) return { leaseMs, ttlMs: defaultTtlMs, classes: { lease, ttl: 'default' as const } }
    const ttlClass = ttlClasses[i % ttlClasses.length]!
    return { leaseMs, ttlMs: TTLS[ttlClass](rng, leaseMs), classes: { lease, ttl: ttlClass } }
  })
}
