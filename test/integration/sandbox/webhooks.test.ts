/**
 * Signed webhooks (issue 28) from a real control plane about a real sandbox: an operator destination and
 * the sandbox's own (`webhookUrl` through the SDK) receive created, paused, resumed and ended, each
 * signature checked; across a restart of the control plane while a delivery was failing, nothing is
 * lost and nothing sent twice, and no body carries the sandbox's token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControlPlane } from '../../../control-plane/control-plane.js';
import type { WebhookEvent } from '../../../protocol/webhook-wire.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';
import {
  startControlPlane,
  TEST_OPERATOR_KEY,
  type InProcessControlPlane,
} from '../support/control-plane.js';

const SECRET = 'integration-webhook-secret-0123456789';

describe('signed webhooks', { timeout: 90_000 }, () => {
  let operator: WebhookReceiver;
  let own: WebhookReceiver;
  let cp: InProcessControlPlane;
  let restarted: ControlPlane | undefined;

  beforeAll(async () => {
    operator = await WebhookReceiver.start(SECRET);
    own = await WebhookReceiver.start(SECRET);
    cp = await startControlPlane({ webhooks: [operator.url], webhookSecret: SECRET });
  });

  afterAll(async () => {
    await restarted?.close();
    await cp.stop();
    await operator.close();
    await own.close();
  });

  it('delivers a real sandbox’s lifecycle to both destinations, in order, across a restart', async () => {
    const sbx = await cp.createSandbox({ webhookUrl: own.url });
    const of = (type: string) => (event: WebhookEvent) =>
      event.sandboxId === sbx.sandboxId && event.type === `sandbox.lifecycle.${type}`;
    await Promise.all([operator.waitFor(of('created')), own.waitFor(of('created'))]);
    await sbx.pause();
    await Promise.all([operator.waitFor(of('paused')), own.waitFor(of('paused'))]);

    // The operator's destination fails the resume; the control plane stops with it waiting.
    operator.status = 503;
    await sbx.connect();
    await own.waitFor(of('resumed'));
    await operator.until(() => operator.attempts.find((attempt) => attempt.status === 503));
    await cp.plane.close();

    operator.status = 200;
    restarted = await ControlPlane.start({
      stateDir: cp.stateDir,
      driver: cp.driver,
      operatorKey: TEST_OPERATOR_KEY,
      webhooks: [operator.url],
      webhookSecret: SECRET,
    });
    await operator.waitFor(of('resumed'));
    await restarted.kill(sbx.sandboxId, sbx.accessToken);
    await Promise.all([operator.waitFor(of('ended')), own.waitFor(of('ended'))]);

    for (const hook of [operator, own]) {
      expect(hook.attempts.every((attempt) => attempt.verified)).toBe(true);
      expect(hook.typesOf(sbx.sandboxId)).toEqual(['created', 'paused', 'resumed', 'ended']);
      expect(hook.events.at(-1)).toMatchObject({ state: 'ended', reason: 'killed' });
      for (const { body } of hook.attempts) expect(body).not.toContain(sbx.accessToken);
    }
    expect(operator.events.find(of('paused'))).toMatchObject({ reason: 'paused', state: 'suspended' });
  });
});
