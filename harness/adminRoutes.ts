// The bank's admin routes as the grader's machinery uses them, outside any
// check (no trace, no timeout of a check's): the clock (gradeClock.ts), the
// instance's settings and database (the instance pool), the core's state.
import type { Settings } from '#bank/config.ts'
import { request } from 'undici'
import type { Endpoint } from './http.ts'

/** What the admin routes are sent to: a running instance. */
export type AdministeredInstance = { readonly endpoint: Endpoint; readonly adminToken: string }

/** The answer's status and parsed body; the body is undefined when it is not JSON. */
export async function adminRequest(
  instance: AdministeredInstance,
  method: 'GET' | 'PUT',
  path: string,
  body?: unknown,
  // Far above what an admin route takes: a server this slow is hung, and the watchdog says so first.
  timeoutMs = 30_000,
): Promise<{ status: number; text: string; json: unknown }> {
  const { endpoint, adminToken } = instance
  const res = await request(`${typeof endpoint === 'string' ? endpoint : endpoint.url}${path}`, {
    method,
    dispatcher: typeof endpoint === 'string' ? undefined : endpoint.agent,
    headers: { authorization: `Bearer ${adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  })
  const text = await res.body.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: res.statusCode, text, json }
}

async function expectOk(instance: AdministeredInstance, method: 'GET' | 'PUT', path: string, body?: unknown, timeoutMs?: number): Promise<unknown> {
  const answer = await adminRequest(instance, method, path, body, timeoutMs)
  if (answer.status !== 200) throw new Error(`${method} ${path} answered ${answer.status}: ${answer.text.slice(0, 300)}`)
  return answer.json
}

/** Whether the instance offers PUT /admin/instance (the bank does; a --server may not). */
export async function offersRenewal(instance: AdministeredInstance): Promise<boolean> {
  try {
    return (await adminRequest(instance, 'GET', '/admin/instance')).status === 200
  } catch {
    return false
  }
}

/** A new generation of the instance: these settings (every other one at its default), on `database` (a name beside its own). */
export async function renewInstance(instance: AdministeredInstance, settings: Partial<Settings>, database?: string): Promise<void> {
  await expectOk(instance, 'PUT', '/admin/instance', { settings, ...(database === undefined ? {} : { database }) })
}

/** The core as an instance starts with it: nothing held, nothing failing, no crash armed, and `delayMs` when given. */
export async function resetCore(instance: AdministeredInstance, o: { delayMs?: number; timeoutMs?: number } = {}): Promise<void> {
  const delay = o.delayMs === undefined ? {} : { delayMs: o.delayMs }
  await expectOk(instance, 'PUT', '/admin/core', { hold: false, failNext: 0, crashAfterCommit: false, ...delay }, o.timeoutMs)
}

/**
 * PUT /admin/clock. An instance already past `nowMs` (a move made up for as it
 * started met the next move on the way) answers that the clock never goes
 * back: it stands where the timeline is, which is what was asked.
 */
export async function putClock(instance: AdministeredInstance, nowMs: number): Promise<void> {
  const answer = await adminRequest(instance, 'PUT', '/admin/clock', { nowMs })
  const type = (answer.json as { type?: string } | undefined)?.type
  if (answer.status === 200 || (answer.status === 409 && type === '/problems/clock-never-goes-back')) return
  throw new Error(`PUT /admin/clock answered ${answer.status}: ${answer.text.slice(0, 300)}`)
}

/** Whether the instance's clock can be moved (GET /admin/clock says controlled). */
export async function clockIsControlled(instance: AdministeredInstance): Promise<boolean> {
  try {
    const answer = await adminRequest(instance, 'GET', '/admin/clock')
    return answer.status === 200 && (answer.json as { controlled?: boolean } | undefined)?.controlled === true
  } catch {
    return false
  }
}
