// Stage 5, the published policy: every money-route response carries
// Idempotency-Key-Policy, computed from the server's configuration.
import { type Line, phrases } from '#harness/i18n/phrase.ts'
import { parseDictionary } from 'structured-headers'
import type { BankClient } from '#harness/bankClient.ts'
import { fail, type Check } from '../engine/check.ts'
import { courseRule } from '../engine/courseRule.ts'
import type { Reply } from '#harness/http.ts'
import { DEFAULT_KEY_TTL_MS, DEFAULT_LEASE_MS, openParties } from './setup.ts'

// What these checks tell a learner, as templates the packs translate (i18n/<lang>.json, "messages": stage5Policy.<key>).
const say = phrases('stage5Policy', {
  wrongBecause: '{what}: {why}',
  noPolicyHeader: '(no Idempotency-Key-Policy header)',
  publishes: 'every money-route response publishes the key policy',
  dictionary: 'the policy is a Structured Field Dictionary (RFC 8941)',
  ttl: 'ttl is the configured LAB_KEY_TTL_MS in whole seconds ({ttl})',
  lease: 'lease is the configured LAB_LEASE_MS in whole seconds ({lease})',
  scope: 'scope is the string "client route": keys are scoped per client and per route',
  defaultServer: 'a transfer on the default server',
  itsReplay: 'its replay',
  aDeposit: 'a deposit',
  configuredServer: 'a transfer on a server started with LAB_KEY_TTL_MS={ttl}, LAB_LEASE_MS={lease}',
})

/** Idempotency-Key-Policy: ttl=<s>, lease=<s>, scope="client route" (a Structured Field Dictionary). */
function expectPolicy(reply: Reply, expected: { ttl: number; lease: number }, what: Line): void {
  const header = reply.headers['idempotency-key-policy']
  const wanted = `Idempotency-Key-Policy: ttl=${expected.ttl}, lease=${expected.lease}, scope="client route"`
  const wrong = (why: Line): never =>
    // The header is the course's: draft-07 asks for the policy in the documentation.
    fail(courseRule('policyHeader', say('wrongBecause', { what, why })), {
      exchange: reply.exchange,
      expected: wanted,
      got: header ?? say('noPolicyHeader'),
    })
  if (header === undefined) wrong(say('publishes'))
  let policy: ReturnType<typeof parseDictionary>
  try {
    policy = parseDictionary(header!)
  } catch {
    // biome-ignore lint/correctness/noVoidTypeReturn: wrong() throws; the return tells TypeScript that the catch ends here
    return wrong(say('dictionary'))
  }
  const item = (name: string) => policy.get(name)?.[0]
  if (item('ttl') !== expected.ttl) wrong(say('ttl', { ttl: expected.ttl }))
  if (item('lease') !== expected.lease) wrong(say('lease', { lease: expected.lease }))
  const scope = item('scope')
  if (typeof scope !== 'string' || !['client', 'route'].every((part) => scope.split(' ').includes(part))) wrong(say('scope'))
}

export const policyPublished: Check = {
  id: 'policy-published',
  title: 'Every money-route response publishes Idempotency-Key-Policy, matching the configured TTL and lease',
  points: 4,
  hint: 'Return policyHeaders from createLayer, computed from config.keyTtlMs and config.leaseMs: not a constant.',
  timeoutMs: 20_000,
  async run(ctx) {
    // Another configuration, drawn at random and never the default TTL or lease
    // (the header must follow it, not a constant that happens to match): its
    // server starts while the shared one, with the defaults, is checked.
    const defaults = { ttl: DEFAULT_KEY_TTL_MS / 1000, lease: DEFAULT_LEASE_MS / 1000 }
    const ttl = ctx.rng.int(60, defaults.ttl - 1) // under the default
    const lease = ctx.rng.int(2, 119) // 2–120 s, the default skipped
    const configured = { ttl, lease: lease < defaults.lease ? lease : lease + 1 }
    const starting = ctx.startServer({ settings: { keyTtlMs: configured.ttl * 1000, leaseMs: configured.lease * 1000 } })
    starting.catch(() => undefined) // awaited below, unless the default server fails first
    const [a] = await openParties(ctx, 1)
    const body = { from: a.accounts[0]!, to: a.accounts[1]!, amount: ctx.rng.amount(1_000, 90_000) }
    const key = ctx.rng.uuid()
    expectPolicy(await ctx.bank.transfer(a.customer, body, { key }), defaults, say('defaultServer'))
    expectPolicy(await ctx.bank.transfer(a.customer, body, { key }), defaults, say('itsReplay'))
    expectPolicy(await ctx.bank.deposit(a.customer, { to: a.accounts[1]!, amount: ctx.rng.amount() }, { key: ctx.rng.uuid() }), defaults, say('aDeposit'))
    const other: BankClient = await starting
    const [c] = await openParties(ctx, 1, 2, other)
    const reply = await other.transfer(c.customer, { from: c.accounts[0]!, to: c.accounts[1]!, amount: ctx.rng.amount(1_000, 90_000) }, { key: ctx.rng.uuid() })
    expectPolicy(reply, configured, say('configuredServer', { ttl: configured.ttl * 1000, lease: configured.lease * 1000 }))
    ctx.note(`Idempotency-Key-Policy: ${reply.headers['idempotency-key-policy']}`)
  },
}
