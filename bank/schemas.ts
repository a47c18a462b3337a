// What the bank accepts. Money is an integer number of won; anything else is a
// 400 before any code that could move money runs.
import { z } from 'zod'
import { unstorableReason, unstorableStrings } from './storableText.ts'

/** One trillion won: far above any real transfer, far below 2^53. */
export const MAX_AMOUNT = 1_000_000_000_000

/**
 * Deepest nesting of arrays and objects a body may have (the top-level object
 * is level 1). Checked on the text before any schema runs: z.json() below
 * recurses, and a few kilobytes of brackets would overflow its stack.
 */
export const MAX_JSON_DEPTH = 32

/** Top-level members that hold money: their literal must be a whole number as written (body.ts). */
export const MONEY_MEMBERS = ['amount', 'balance'] as const

const amount = z.number().int('amount must be a whole number of won').positive().max(MAX_AMOUNT)

/** A string the bank's stores can hold (storableText.ts): no U+0000, no lone surrogate. Every client string goes through it. */
const text = () =>
  z.string().check((ctx) => {
    const why = unstorableReason(ctx.value)
    if (why) ctx.issues.push({ code: 'custom', message: `the string ${why}`, input: ctx.value })
  })
const accountId = text().min(1).max(64)

export const NewClient = z.strictObject({ name: text().min(1).max(100) })
export const NewAccount = z.strictObject({ balance: z.number().int().min(0).max(MAX_AMOUNT) })

// memo and metadata exist so real payloads carry text and nested objects:
// exactly what canonicalization (stage 2) has to get right.
const extras = {
  memo: text().max(140).optional(),
  metadata: z
    .record(z.string(), z.json())
    .check((ctx) => {
      for (const { path, message } of unstorableStrings(ctx.value)) ctx.issues.push({ code: 'custom', message, path, input: ctx.value })
    })
    .optional(),
}

export const TransferBody = z
  .strictObject({ from: accountId, to: accountId, amount, ...extras })
  .refine((t) => t.from !== t.to, { message: 'from and to must be different accounts', path: ['to'] })

export const DepositBody = z.strictObject({ to: accountId, amount, ...extras })

export const CoreUpdate = z.strictObject({
  delayMs: z.number().int().min(0).max(600_000).optional(),
  hold: z.boolean().optional(),
  holdNext: z.number().int().min(0).max(1_000).optional(),
  letGo: z.strictObject({ call: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER), fails: z.boolean() }).optional(),
  failNext: z.number().int().min(0).max(1_000).optional(),
  crashAfterCommit: z.boolean().optional(),
})
