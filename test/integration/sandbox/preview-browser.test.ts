/**
 * Preview URLs in a real browser (issue 28): Debian's chromium opens a sandbox's web app through its
 * preview URL, by path and by host (`--preview-domain`, the browser mapping the wildcard to loopback),
 * from a link carrying the port token: the page, its fetch, its iframe, its WebSocket and its event
 * stream all work on the cookie the link's token became, the address bar keeps no token, a browser
 * without it is refused, and the page still answers after the sandbox was paused (the request wakes it).
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../../sdk/sandbox.js';
import { launchBrowser, screenshot } from '../support/browser.js';
import { startControlPlane, type InProcessControlPlane } from '../support/control-plane.js';
import { PREVIEW_APP } from '../support/preview-app.js';

const DOMAIN = 'preview.test';
const PORT = 8000;

let cp: InProcessControlPlane;
let sbx: Sandbox;
let browser: Browser;

/** Waits until the page shows what each of its parts got. */
async function expectAppWorks(page: Page): Promise<void> {
  await expect.poll(() => page.locator('#fetch').textContent()).toBe('fetch /echo');
  await expect.poll(() => page.locator('#ws').textContent()).toBe('ws echo:hello');
  await expect.poll(() => page.locator('#sse').textContent()).toBe('sse one,two');
  await expect
    .poll(() => page.frameLocator('iframe').locator('#frame').textContent())
    .toBe('inside the frame');
}

describe('preview URLs in a browser', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    cp = await startControlPlane({}, { previewDomain: DOMAIN });
    sbx = await cp.createSandbox();
    await sbx.files.write('/tmp/app.mjs', PREVIEW_APP);
    await new Promise<void>((resolve, reject) => {
      sbx.commands
        .run(`node /tmp/app.mjs ${String(PORT)}`, {
          background: true,
          onStdout: (data) => {
            if (data.includes('listening')) resolve();
          },
        })
        .catch(reject);
    });
    browser = await launchBrowser([`--host-resolver-rules=MAP *.${DOMAIN} 127.0.0.1`]);
  });

  afterAll(async () => {
    await browser.close();
    await sbx.kill().catch(() => undefined);
    await cp.stop();
  });

  const forms = (): { name: string; clean: string; link: string }[] => {
    const token = sbx.ports.token(PORT);
    const cpPort = new URL(cp.url).port;
    const byPath = `${cp.url}/v1/sandboxes/${sbx.sandboxId}/ports/${String(PORT)}/`;
    const byHost = `http://${String(PORT)}-${sbx.sandboxId}.${DOMAIN}:${cpPort}/`;
    return [
      { name: 'path', clean: byPath, link: `${byPath}?sdk_preview_token=${token}` },
      { name: 'host', clean: byHost, link: sbx.ports.url(PORT) },
    ];
  };

  it('gives the SDK host-based URLs under a preview domain', () => {
    const cpPort = new URL(cp.url).port;
    expect(sbx.getHost(PORT)).toBe(
      `http://${String(PORT)}-${sbx.sandboxId}.${DOMAIN}:${cpPort}/?sdk_preview_token=${sbx.ports.token(PORT)}`,
    );
  });

  for (const form of ['path', 'host'] as const) {
    it(`serves the page, its fetch, iframe, WebSocket and event stream by ${form} from a link`, async () => {
      const { clean, link } = forms().find((f) => f.name === form) ?? { clean: '', link: '' };
      let context: BrowserContext | undefined;
      try {
        context = await browser.newContext();
        const page = await context.newPage();
        await page.goto(link);
        expect(page.url()).toBe(clean); // the token left the address bar for a cookie
        await expectAppWorks(page);
        await screenshot(page, `preview-${form}`);
        const cookies = await context.cookies();
        expect(cookies).toHaveLength(1);
        expect(cookies[0]).toMatchObject({ name: 'sdk_preview', httpOnly: true, sameSite: 'Lax' });

        // Paused, then opened again: the request resumes the sandbox and is answered.
        await sbx.pause();
        await page.reload();
        await expectAppWorks(page);
        expect(cp.plane.get(sbx.sandboxId).state).toBe('running');
      } finally {
        await context?.close();
      }
    });

    it(`refuses a browser without the token by ${form}`, async () => {
      const { clean } = forms().find((f) => f.name === form) ?? { clean: '' };
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        const response = await page.goto(clean);
        expect(response?.status()).toBe(401);
        expect(await page.locator('#fetch').count()).toBe(0); // nothing of the app's page
      } finally {
        await context.close();
      }
    });
  }
});
