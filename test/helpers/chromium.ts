// Headless Chromium for the tests that check an HTML page as rendered (the
// instructors' report, a failing history's sequence diagram): Debian's
// chromium driven by playwright-core, with no network and a profile in the
// test's scratch folder.
import { existsSync } from 'node:fs'
import { chromium, type BrowserContext } from 'playwright-core'

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
export const haveChromium = existsSync(CHROMIUM)
/** Appended to a test's name when it is skipped for want of Chromium. */
export const noChromium = haveChromium ? '' : ` (skipped: no Chromium at ${CHROMIUM})`

export function openChromium(profileDir: string): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
}
