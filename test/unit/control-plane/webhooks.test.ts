/**
 * Signed webhooks (issue 28) on the memory driver, to receivers on loopback that check every signature:
 * the lifecycle events in order with their reasons, a sandbox's own destination, refusals before any
 * side effect, retries with backoff, restarts in the middle of a backlog (compaction included) with
 * nothing lost and nothing sent twice that was acknowledged, and payloads that carry no token, preview
 * key or secret. With timers off the control plane sends only in `tick()`, which waits for the sends.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { verifyWebhookSignature, webhookSignature } from '../../../protocol/webhook-wire.js';
import { ControlPlane } from '../../../control-plane/control-plane.js';
import { MemoryPlaneWorld } from '../../support/memory-control-plane.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';

const closedEgress = { template: 'sdk-base-caps', allowInternetAccess: false } as const;
const SECRET = 'test-webhook-secret-0123456789abcdef';

let world: MemoryPlaneWorld;
let receivers: WebhookReceiver[];
beforeEach(() => {
  world = new MemoryPlaneWorld();
  receivers = [];
});
afterEach(async () => {
  await world.dispose();
  for (const receiver of receivers) await receiver.close();
});

/** A receiver checking signatures with `secret` against the world's clock. */
async function receiver(secret = SECRET, path?: string): Promise<WebhookReceiver> {
  const started = await WebhookReceiver.start(secret, () => world.now, path);
  receivers.push(started);
  return started;
}

/** Each acknowledged event's id appears once. */
function expectNoDuplicates(hook: WebhookReceiver): void {
  const ids = hook.events.map((event) => event.id);
  expect(new Set(ids).size).toBe(ids.length);
}

describe('lifecycle events', () => {
  it('POSTs created, paused, resumed and ended, signed, in order, with their reasons and facts', async () => {
    const hook = await receiver();
    const plane = await world.start({ webhooks: [hook.url], webhookSecret: SECRET });
    const sbx = await plane.create({ ...closedEgress, metadata: { owner: 'ci' } });
    const createdAt = world.now;
    world.now += 1000;
    await plane.pause(sbx.sandboxId, sbx.accessToken);
    world.now += 1000;
    await plane.connect(sbx.sandboxId, sbx.accessToken);
    world.now += 1000;
    await plane.kill(sbx.sandboxId, sbx.accessToken);
    expect(hook.attempts).toEqual([]); // timers off: nothing before tick
    await plane.tick();

    expect(hook.attempts.every((attempt) => attempt.verified)).toBe(true);
    expect(hook.typesOf(sbx.sandboxId)).toEqual(['created', 'paused', 'resumed', 'ended']);
    const [created, paused, resumed, ended] = hook.events;
    expect(created).toMatchObject({
      sandboxId: sbx.sandboxId,
      state: 'running',
      reason: null,
      at: createdAt,
      seq: 0,
      template: 'sdk-base-caps',
      metadata: { owner: 'ci' },
    });
    expect(paused).toMatchObject({ state: 'suspended', reason: 'paused', at: createdAt + 1000 });
    expect(resumed).toMatchObject({ state: 'running', reason: null, at: createdAt + 2000 });
    expect(ended).toMatchObject({ state: 'ended', reason: 'killed', at: createdAt + 3000 });
    const seqs = hook.events.map((event) => event.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(hook.attempts.map((attempt) => attempt.id)).toEqual(hook.events.map((event) => event.id));
    expectNoDuplicates(hook);
  });

  it('sends idle suspends and timeouts with their reasons, and a dead sandboxd as failed', async () => {
    const hook = await receiver();
    const plane = await world.start({ webhooks: [hook.url], webhookSecret: SECRET });
    const idle = await plane.create({
      ...closedEgress,
      idlePolicy: { maxIdleSeconds: 60, autoResume: true },
    });
    world.now += 60_000;
    await plane.tick();
    const timed = await plane.create({ ...closedEgress, timeoutMs: 1000 });
    world.now += 1000;
    await plane.tick();
    const dying = await plane.create(closedEgress);
    world.driver.exit(dying.sandboxId);
    await vi.waitFor(() => expect(plane.get(dying.sandboxId).state).toBe('ended'));
    await plane.tick();

    expect(hook.events.find((e) => e.sandboxId === idle.sandboxId && e.state === 'suspended')).toMatchObject({
      type: 'sandbox.lifecycle.paused',
      reason: 'idle',
    });
    const last = (sandboxId: string) => hook.events.filter((event) => event.sandboxId === sandboxId).at(-1);
    expect(hook.typesOf(timed.sandboxId)).toEqual(['created', 'ended']);
    expect(last(timed.sandboxId)).toMatchObject({ state: 'ended', reason: 'timeout' });
    expect(hook.typesOf(dying.sandboxId)).toEqual(['created', 'failed']);
    expect(last(dying.sandboxId)).toMatchObject({ state: 'ended', reason: 'failed' });
  });

  it("sends a sandbox's events to its own webhookUrl as well, and never shows that URL", async () => {
    const operator = await receiver();
    const own = await receiver(SECRET, '/mine?tag=1');
    const plane = await world.start({ webhooks: [operator.url], webhookSecret: SECRET });
    const mine = await plane.create({ ...closedEgress, webhookUrl: own.url });
    const other = await plane.create(closedEgress);
    await plane.kill(mine.sandboxId, mine.accessToken);
    await plane.tick();
    expect(own.typesOf(mine.sandboxId)).toEqual(['created', 'ended']);
    expect(own.events.some((event) => event.sandboxId === other.sandboxId)).toBe(false);
    expect(operator.typesOf(mine.sandboxId)).toEqual(['created', 'ended']);
    expect(operator.typesOf(other.sandboxId)).toEqual(['created']);
    // Each destination's delivery has an id of its own.
    expect(own.events[0]?.id).not.toBe(operator.events[0]?.id);
    expect(JSON.stringify(plane.get(mine.sandboxId))).not.toContain('mine?tag');
    expect(JSON.stringify(plane.list())).not.toContain('mine?tag');
  });

  it('needs no operator destination: a sandbox with a webhookUrl alone gets its events', async () => {
    const own = await receiver();
    const plane = await world.start({ webhookSecret: SECRET });
    const sbx = await plane.create({ ...closedEgress, webhookUrl: own.url });
    await plane.pause(sbx.sandboxId, sbx.accessToken);
    await plane.tick();
    expect(own.typesOf(sbx.sandboxId)).toEqual(['created', 'paused']);
  });
});

describe('refusals', () => {
  it('refuses a webhookUrl that is not a plain http(s) URL before anything is launched', async () => {
    const plane = await world.start({ webhookSecret: SECRET });
    for (const webhookUrl of [
      'ftp://127.0.0.1/hook',
      'javascript:alert(1)',
      'file:///etc/passwd',
      'http://user:pass@127.0.0.1/hook',
      'http://127.0.0.1/hook#frag',
      '/relative',
      `http://127.0.0.1/${'a'.repeat(2048)}`,
      42,
    ]) {
      await expect(plane.create({ ...closedEgress, webhookUrl } as never)).rejects.toMatchObject({
        name: 'InvalidArgumentError',
        context: { field: 'webhookUrl' },
      });
    }
    expect(world.driver.idsCalled('launch')).toHaveLength(0);
  });

  it('refuses operator destinations that are not http(s) URLs, and a short secret, at start', async () => {
    await expect(world.start({ webhooks: ['ftp://127.0.0.1/x'] })).rejects.toMatchObject({
      name: 'InvalidArgumentError',
    });
    await expect(world.start({ webhookSecret: 'short' })).rejects.toMatchObject({
      name: 'InvalidArgumentError',
      context: { field: 'webhookSecret' },
    });
  });
});

describe('delivery', () => {
  it('retries a failing destination with exponential backoff, then delivers in order', async () => {
    const hook = await receiver();
    hook.status = 503;
    const plane = await world.start({ webhooks: [hook.url], webhookSecret: SECRET });
    const sbx = await plane.create(closedEgress);
    await plane.pause(sbx.sandboxId, sbx.accessToken);
    await plane.tick();
    expect(hook.attempts).toHaveLength(1); // the head failed: the next waits behind it
    world.now += 999;
    await plane.tick();
    expect(hook.attempts).toHaveLength(1);
    world.now += 1;
    await plane.tick(); // 1 s after the first failure
    expect(hook.attempts).toHaveLength(2);
    world.now += 1999;
    await plane.tick();
    expect(hook.attempts).toHaveLength(2);
    world.now += 1;
    await plane.tick(); // 2 s after the second
    expect(hook.attempts).toHaveLength(3);
    hook.status = 204;
    world.now += 4000;
    await plane.tick();
    expect(hook.typesOf(sbx.sandboxId)).toEqual(['created', 'paused']);
    // Every attempt of the same delivery carries the same id.
    expect(new Set(hook.attempts.slice(0, 4).map((attempt) => attempt.id)).size).toBe(1);
  });

  it('keeps each sandbox in order while another sandbox’s lane fails', async () => {
    const hook = await receiver();
    const plane = await world.start({ webhooks: [hook.url], webhookSecret: SECRET });
    const first = await plane.create(closedEgress);
    await plane.tick();
    hook.status = 500;
    await plane.pause(first.sandboxId, first.accessToken);
    await plane.connect(first.sandboxId, first.accessToken);
    await plane.tick(); // paused fails: resumed waits
    hook.status = 200;
    const second = await plane.create(closedEgress);
    await plane.tick(); // second's lane is not behind first's
    expect(hook.typesOf(second.sandboxId)).toEqual(['created']);
    expect(hook.typesOf(first.sandboxId)).toEqual(['created']);
    world.now += 1000;
    await plane.tick();
    expect(hook.typesOf(first.sandboxId)).toEqual(['created', 'paused', 'resumed']);
  });
});

describe('with timers', () => {
  it('sends at once, and retries a failed delivery on its own after the backoff', async () => {
    const hook = await WebhookReceiver.start(SECRET);
    receivers.push(hook);
    hook.status = 503;
    const plane = await ControlPlane.start({
      stateDir: world.stateDir,
      driver: world.driver,
      webhooks: [hook.url],
      webhookSecret: SECRET,
    });
    try {
      const sbx = await plane.create(closedEgress);
      await hook.until(() => hook.attempts[0]);
      hook.status = 200;
      await hook.waitFor((event) => event.sandboxId === sbx.sandboxId);
      expect(hook.attempts.map((attempt) => attempt.status)).toEqual([503, 200]);
    } finally {
      await plane.close();
    }
  });
});

describe('across restarts', () => {
  it('resumes a backlog after a restart: nothing lost, nothing acknowledged sent again', async () => {
    const hook = await receiver();
    const options = { webhooks: [hook.url], webhookSecret: SECRET };
    const first = await world.start(options);
    const a = await first.create(closedEgress);
    const b = await first.create(closedEgress);
    await first.tick(); // both created events acknowledged
    hook.status = 500;
    await first.pause(a.sandboxId, a.accessToken);
    await first.kill(b.sandboxId, b.accessToken);
    await first.tick(); // fails: a backlog
    const acknowledged = hook.events.length;
    expect(acknowledged).toBe(2);

    const second = await world.restart(first, options);
    const c = await second.create(closedEgress);
    hook.status = 200;
    await second.tick();
    expect(hook.typesOf(a.sandboxId)).toEqual(['created', 'paused']);
    expect(hook.typesOf(b.sandboxId)).toEqual(['created', 'ended']);
    expect(hook.typesOf(c.sandboxId)).toEqual(['created']);
    expectNoDuplicates(hook);

    const third = await world.restart(second, options);
    await third.tick();
    expect(hook.attempts).toHaveLength(7); // 2 + 2 failed + 3: nothing more after another restart
  });

  it('sends again only what was not acknowledged when the control plane stopped mid-send', async () => {
    const hook = await receiver();
    const options = { webhooks: [hook.url], webhookSecret: SECRET };
    const first = await world.start(options);
    const sbx = await first.create(closedEgress);
    await first.pause(sbx.sandboxId, sbx.accessToken);
    // The events are journaled transitions; the control plane stops before any delivery.
    const second = await world.restart(first, options);
    await second.tick();
    expect(hook.typesOf(sbx.sandboxId)).toEqual(['created', 'paused']);
    expectNoDuplicates(hook);
  });

  it('keeps deliveries waiting across a compaction of the journal', async () => {
    const hook = await receiver();
    const options = { webhooks: [hook.url], webhookSecret: SECRET, compactAfter: 5 };
    const first = await world.start(options);
    const sbx = await first.create(closedEgress);
    await first.tick();
    hook.status = 500;
    for (let i = 0; i < 3; i++) {
      await first.pause(sbx.sandboxId, sbx.accessToken);
      await first.connect(sbx.sandboxId, sbx.accessToken);
    }
    await first.tick(); // fails, and compacts (more than 5 records)
    expect(world.journal().some((record) => record.kind === 'webhook_pending')).toBe(true);
    expect(world.journal().some((record) => record.kind === 'event')).toBe(false);

    hook.status = 200;
    const second = await world.restart(first, options);
    await second.tick();
    expect(hook.typesOf(sbx.sandboxId)).toEqual([
      'created',
      ...Array.from({ length: 3 }, () => ['paused', 'resumed']).flat(),
    ]);
    expectNoDuplicates(hook);
  });

  it('sends to destinations given at the latest start: a removed one gets nothing more, a new one only new events', async () => {
    const old = await receiver();
    const added = await receiver();
    const first = await world.start({ webhooks: [old.url], webhookSecret: SECRET });
    const sbx = await first.create(closedEgress);
    old.status = 500;
    await first.tick();
    const second = await world.restart(first, { webhooks: [added.url], webhookSecret: SECRET });
    await second.pause(sbx.sandboxId, sbx.accessToken);
    old.status = 200;
    world.now += 600_000;
    await second.tick();
    expect(old.events).toEqual([]);
    expect(added.typesOf(sbx.sandboxId)).toEqual(['paused']);
    // And after yet another restart with the same destinations, the replay sends nothing twice.
    const third = await world.restart(second, { webhooks: [added.url], webhookSecret: SECRET });
    await third.tick();
    expect(added.events).toHaveLength(1);
  });
});

describe('what a payload carries', () => {
  it('never the access token, the preview key or the signing secret', async () => {
    const hook = await receiver();
    const plane = await world.start({ webhooks: [hook.url], webhookSecret: SECRET });
    const sbx = await plane.create({ ...closedEgress, metadata: { team: 'a' } });
    const connected = await plane.connect(sbx.sandboxId, sbx.accessToken);
    await plane.pause(sbx.sandboxId, sbx.accessToken);
    await plane.kill(sbx.sandboxId, sbx.accessToken);
    await plane.tick();
    expect(hook.events).toHaveLength(3);
    for (const { body } of hook.attempts) {
      for (const secret of [
        sbx.accessToken,
        sbx.previewKey,
        connected.previewKey ?? sbx.previewKey,
        SECRET,
      ]) {
        expect(body).not.toContain(secret);
      }
      expect(Object.keys(JSON.parse(body) as object).sort()).toEqual(
        ['at', 'id', 'metadata', 'reason', 'sandboxId', 'seq', 'state', 'template', 'type'].sort(),
      );
    }
  });
});

describe('the signing secret', () => {
  it("is the state folder's webhook-secret (0600) unless given, and checks only what was signed", async () => {
    const plane = await world.start();
    const file = join(world.stateDir, 'webhook-secret');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const secret = readFileSync(file, 'utf8').trim();
    const hook = await receiver(secret);
    const wrong = await receiver('another-secret-0123456789abcdef');
    const restarted = await world.restart(plane, { webhooks: [hook.url, wrong.url] });
    await restarted.create(closedEgress);
    await restarted.tick();
    expect(hook.events).toHaveLength(1);
    expect(wrong.attempts.map((attempt) => attempt.status)).toEqual([401]);

    const [attempt] = hook.attempts;
    if (attempt === undefined) throw new Error('no attempt');
    const timestamp = String(Math.floor(world.now / 1000));
    const signed = { secret, body: attempt.body, timestamp, now: world.now };
    const signature = webhookSignature(secret, Number(timestamp), attempt.body);
    expect(verifyWebhookSignature({ ...signed, signature })).toBe(true);
    expect(verifyWebhookSignature({ ...signed, signature, body: `${attempt.body} ` })).toBe(false);
    expect(verifyWebhookSignature({ ...signed, signature, now: world.now + 301_000 })).toBe(false);
  });
});
