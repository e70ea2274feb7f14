/**
 * `sdk template build [--name sdk-agent] [--base sdk-base-caps] [--memory-mb N] [--no-runtime-b]
 * [--no-prefetch] [--force] [--timeout SECONDS]`: builds an agent template on the control plane
 * (`SDK_CONTROL_PLANE_URL`, with the operator key from `SDK_API_KEY` or the state folder's key file),
 * through `AgentTemplate`. A terminal sees one progress bar redrawn in place; anything else (a log, a
 * pipe) a plain line per step. Exit 0 when built or up to date, 1 when the build failed, 2 for bad options.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { operatorKeyFile } from '../control-plane/operator-key.js';
import { AgentTemplate, type TemplateBuildStep } from '../sdk/agent-template.js';
import { InvalidArgumentError, SdkError } from '../rules/errors.js';

/** Where the command writes, and whether that is a terminal. */
export interface CliOutput {
  write(text: string): void;
  readonly isTTY?: boolean;
}

/** Width of the bar, in cells. */
const BAR_CELLS = 24;

/** A step as a terminal shows it: the bar, redrawn over the line before (`\r`, erase line). */
export function progressBar(step: TemplateBuildStep): string {
  const filled = Math.round((BAR_CELLS * (step.index - 1)) / step.total);
  const bar = `${'#'.repeat(filled)}${'.'.repeat(BAR_CELLS - filled)}`;
  return `\r\x1b[2K[${bar}] ${String(step.index)}/${String(step.total)} ${step.step}${step.cached ? ' (cached)' : ''}`;
}

/** A step as a log shows it: one line. */
export function progressLine(step: TemplateBuildStep): string {
  return `step ${String(step.index)}/${String(step.total)}: ${step.step}${step.cached ? ' (cached)' : ''}\n`;
}

/** The operator key: `SDK_API_KEY`, else the state folder's key file when this user can read it. */
function useOperatorKey(stateDir: string): void {
  if (process.env.SDK_API_KEY !== undefined && process.env.SDK_API_KEY !== '') return;
  const file = operatorKeyFile(stateDir);
  try {
    if (existsSync(file)) process.env.SDK_API_KEY = readFileSync(file, 'utf8').trim();
  } catch {
    // not readable by this user: the control plane answers unauthenticated, and says so
  }
}

/** Runs `sdk template build` with `args` (after `build`), writing to `out`; the exit code. */
export async function templateBuild(args: readonly string[], out: CliOutput): Promise<number> {
  let template: AgentTemplate;
  let values;
  let timeoutMs: number | undefined;
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: {
        name: { type: 'string' },
        base: { type: 'string' },
        'memory-mb': { type: 'string' },
        'no-runtime-b': { type: 'boolean', default: false },
        'no-prefetch': { type: 'boolean', default: false },
        force: { type: 'boolean', default: false },
        timeout: { type: 'string' },
        'state-dir': { type: 'string', default: '/var/lib/sdk' },
      },
    }));
    const number = (text: string | undefined, field: string): number | undefined => {
      if (text === undefined) return undefined;
      if (!/^\d+$/.test(text)) throw new InvalidArgumentError(`--${field}: must be a whole number`);
      return Number(text);
    };
    const memoryMb = number(values['memory-mb'], 'memory-mb');
    template = new AgentTemplate({
      ...(values.name === undefined ? {} : { name: values.name }),
      ...(values.base === undefined ? {} : { base: values.base as 'sdk-base-caps' }), // checked inside
      ...(memoryMb === undefined ? {} : { memoryMb }),
      runtimeB: !values['no-runtime-b'],
      prefetch: !values['no-prefetch'],
    });
    const timeout = number(values.timeout, 'timeout');
    timeoutMs = timeout === undefined ? undefined : timeout * 1000;
  } catch (error) {
    out.write(`sdk template build: ${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  useOperatorKey(values['state-dir']);
  const tty = out.isTTY === true;
  try {
    const built = await template.build({
      force: values.force,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      onStep: (step) => out.write(tty ? progressBar(step) : progressLine(step)),
    });
    if (tty) out.write('\n');
    out.write(
      built.built
        ? `built template ${built.name} on ${built.base} (recipe ${built.recipeHash.slice(0, 12)}, sandboxd ${built.sandboxdVersion})\n`
        : `template ${built.name} is up to date (recipe ${built.recipeHash.slice(0, 12)}); --force builds it again\n`,
    );
    return 0;
  } catch (error) {
    if (tty) out.write('\n');
    const message = error instanceof SdkError ? error.message : 'the build failed';
    out.write(`sdk template build: ${message}\n`);
    return error instanceof InvalidArgumentError ? 2 : 1;
  }
}
