// Reading a request body: UTF-8 JSON only, parsed, then held to the rules
// JSON.parse does not enforce (strictJson.ts), all before any schema or layer
// sees it. The order matters: the depth limit must stop a body before zod's
// recursive z.json() walks it, and the fingerprint of stage 2 must see exactly
// the value the bank acts on.
import { isUtf8 } from 'node:buffer'
import express, { type NextFunction, type Request, type Response } from 'express'
import { HttpProblem, problem } from './problem.ts'
import { MAX_JSON_DEPTH, MONEY_MEMBERS } from './schemas.ts'
import { isExactInteger, scanJson, type JsonIssue } from './strictJson.ts'

export type RawRequest = Request & { rawBody?: string; rawBodyIsUtf8?: boolean }

// application/json, optionally with charset=utf-8 (any case, quoted or not), nothing else.
const UTF8_JSON = /^\s*application\/json\s*(?:;\s*charset\s*=\s*(?:utf-8|"utf-8")\s*)?$/i

/** 415 for content that is not UTF-8 JSON. A request without content passes (the schema then says what is missing). */
function requireUtf8Json(req: Request, _res: Response, next: NextFunction) {
  const hasContent = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0
  const type = req.headers['content-type']
  if (hasContent && !UTF8_JSON.test(type ?? ''))
    throw new HttpProblem(
      problem(
        415,
        'unsupported-media-type',
        'Unsupported media type',
        `Send the body as Content-Type: application/json (UTF-8); got ${type === undefined ? 'no Content-Type' : JSON.stringify(type)}.`,
      ),
    )
  next()
}

const invalidBody = (errors: JsonIssue[]) =>
  new HttpProblem(
    problem(400, 'invalid-body', 'Invalid request body', errors.map((e) => `${e.path || 'body'}: ${e.message}`).join('; '), { members: { errors } }),
  )

/** After JSON.parse: what the text says that the parsed value hides. */
function requireStrictJson(req: Request, _res: Response, next: NextFunction) {
  const { rawBody, rawBodyIsUtf8 } = req as RawRequest
  if (rawBody === undefined) return next()
  if (!rawBodyIsUtf8) throw new HttpProblem(problem(400, 'malformed-json', 'Malformed JSON', 'The body is not valid UTF-8.'))
  const scan = scanJson(rawBody, MAX_JSON_DEPTH)
  if (scan.tooDeep)
    throw new HttpProblem(
      problem(400, 'json-too-deep', 'JSON nested too deeply', `The body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`, {
        members: { maxDepth: MAX_JSON_DEPTH },
      }),
    )
  const issues = [...scan.issues]
  // 0.99999999999999999999 parses to 1: the schema would see a whole number the client never wrote.
  for (const name of MONEY_MEMBERS) {
    const literal = scan.topLevelNumbers.get(name)
    if (literal !== undefined && !isExactInteger(literal))
      issues.push({ path: name, message: `must be written as a whole number of won; ${literal} is not one, whatever double it parses to` })
  }
  if (issues.length > 0) throw invalidBody(issues)
  next()
}

export function jsonBody(limit: number) {
  return [
    requireUtf8Json,
    express.json({
      limit,
      // Any JSON value parses (null, "text", 7); the schemas then refuse what
      // is not an object, with a 400 that says why.
      strict: false,
      verify: (req, _res, buf) => {
        Object.assign(req, { rawBody: buf.toString('utf8'), rawBodyIsUtf8: isUtf8(buf) })
      },
    }),
    requireStrictJson,
  ]
}
