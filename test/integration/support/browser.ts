/**
 * A real browser for page tests: Debian's chromium (`/usr/bin/chromium`, installed by `.ci/run`) driven
 * by playwright-core, headless, with the flags that keep it off the network (no background
 * networking, no component updates, no sync) and a fresh profile each launch. Screenshots go under
 * `test/artifacts/` for a person to look at.
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Where screenshots are written. */
export const ARTIFACTS = fileURLToPath(new URL('../../artifacts/', import.meta.url));

/** Launches headless chromium; `args` are added to the usual flags. */
export function launchBrowser(args: readonly string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.SDK_TEST_CHROMIUM ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox', // root in CI; the page under test is our own, on loopback
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-default-apps',
      '--disable-extensions',
      ...args,
    ],
  });
}

/** Writes a full-page screenshot to `test/artifacts/<name>.png`. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true });
}
