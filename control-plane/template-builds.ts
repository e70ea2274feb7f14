/**
 * Template builds (`POST /v1/templates`, issue 14): the request checked before anything starts, the
 * build run by the driver one at a time, its steps and its end as lines of a stream. The build stops
 * when its time is up or its caller goes away, and leaves nothing half-made either way.
 */
import { Observable } from 'rxjs';
import { envelopeOf } from '../protocol/error-envelope.js';
import { buildTemplateRequestSchema, type TemplateBuildLine } from '../protocol/template-api.js';
import { SandboxError, SdkError } from '../rules/errors.js';
import { parseOptions } from '../rules/parse-options.js';
import type { SandboxDriver } from '../sandbox-drivers/sandbox-driver.js';

/** The step a build failed at (the driver's `ImageBuildError` names it), else `start`. */
function failedStep(error: unknown): string {
  const step = (error as { step?: unknown }).step;
  return typeof step === 'string' ? step : 'start';
}

/** Runs one driver's template builds, one after another (two builds of one name must not interleave). */
export class TemplateBuilds {
  #queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly driver: SandboxDriver) {}

  /**
   * The build `body` asks for, as lines: a `step` line per step, then `built` or `failed`.
   *
   * @throws InvalidArgumentError for a malformed request, before any build starts
   * @throws SandboxError (`unimplemented`) when the driver cannot build templates
   */
  build(body: unknown): Observable<TemplateBuildLine> {
    const request = parseOptions(buildTemplateRequestSchema, body, 'AgentTemplate');
    const driver = this.driver;
    if (driver.buildTemplate === undefined) {
      throw new SandboxError('this isolation engine cannot build templates', { code: 'unimplemented' });
    }
    return new Observable<TemplateBuildLine>((subscriber) => {
      const gone = new AbortController();
      const signal = AbortSignal.any([gone.signal, AbortSignal.timeout(request.timeoutMs)]);
      const run = this.#queue.then(() =>
        driver.buildTemplate?.(request.template, {
          force: request.force,
          signal,
          onStep: (step) => subscriber.next({ type: 'step', ...step }),
        }),
      );
      this.#queue = run.catch(() => undefined);
      run.then(
        (template) => {
          if (template !== undefined) subscriber.next({ type: 'built', template });
          subscriber.complete();
        },
        (error: unknown) => {
          // A build error's text names the step and the tool's last words (its environment holds no
          // credential); anything else is told as the envelope says it.
          const reported =
            error instanceof SdkError || !(error instanceof Error) ? error : new SandboxError(error.message);
          const envelope = envelopeOf(reported, 'the template build failed');
          subscriber.next({ type: 'failed', step: failedStep(error), error: envelope });
          subscriber.complete();
        },
      );
      return () => gone.abort();
    });
  }
}
