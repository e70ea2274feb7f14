import { describe, expect, it } from 'vitest';
import {
  envelopeOf,
  errorEnvelope,
  errorEnvelopeSchema,
  errorFromEnvelope,
  httpStatusOf,
} from '../../../protocol/error-envelope.js';
import { ERROR_CODES } from '../../../rules/error-codes.js';
import { InvalidArgumentError, SandboxError } from '../../../rules/errors.js';

describe('the error envelope', () => {
  it('is built in one place: context only when there is one', () => {
    expect(errorEnvelope('not_found', 'no such endpoint')).toEqual({
      code: 'not_found',
      message: 'no such endpoint',
    });
    expect(Object.keys(errorEnvelope('not_found', 'm'))).toEqual(['code', 'message']);
    expect(errorEnvelope('sandbox_error', 'm', { failureClass: 'X' })).toEqual({
      code: 'sandbox_error',
      message: 'm',
      context: { failureClass: 'X' },
    });
  });

  it('is what SdkError.toJSON gives', () => {
    const error = new SandboxError('x', { code: 'configuration_rejected', failureClass: 'InvalidRateError' });
    expect(error.toJSON()).toEqual(
      errorEnvelope('configuration_rejected', 'x', { failureClass: 'InvalidRateError' }),
    );
    expect(envelopeOf(error, 'fallback')).toEqual(error.toJSON());
  });

  it('answers anything but an SdkError as sandbox_error without its text', () => {
    const envelope = envelopeOf(new Error('secret-ish detail'), 'the service failed');
    expect(envelope).toEqual({ code: 'sandbox_error', message: 'the service failed' });
    expect(httpStatusOf(envelope)).toBe(500);
    expect(httpStatusOf(new InvalidArgumentError('x').toJSON())).toBe(400);
  });

  it('has a schema that accepts every registry code and nothing else', () => {
    for (const code of ERROR_CODES)
      expect(errorEnvelopeSchema.safeParse({ code, message: 'm' }).success).toBe(true);
    expect(errorEnvelopeSchema.safeParse({ code: 'nope', message: 'm' }).success).toBe(false);
  });

  it('maps the router codes to SandboxError with their status', () => {
    expect(httpStatusOf(errorEnvelope('not_found', 'm'))).toBe(404);
    expect(httpStatusOf(errorEnvelope('method_not_allowed', 'm'))).toBe(405);
    const restored = errorFromEnvelope(errorEnvelope('not_found', 'no such endpoint'));
    expect(restored).toBeInstanceOf(SandboxError);
    expect(restored.code).toBe('not_found');
  });
});
