/**
 * `sdk doctor [--state-dir DIR]`: the host and template checks (`host-checks.ts`), one line each with
 * its fix; exits 1 when any check FAILs.
 */
import { runChecks, type CheckResult } from '../sandbox-drivers/namespace/host-checks.js';

/** One line per check: `PASS name: detail`, and `  fix: …` under a WARN or FAIL. */
export function formatChecks(results: readonly CheckResult[]): string {
  return results
    .map(
      ({ status, name, detail, fix }) =>
        `${status.padEnd(4)} ${name}: ${detail}${fix === undefined ? '' : `\n     fix: ${fix}`}`,
    )
    .join('\n');
}

/** Runs the checks, prints them, and gives the exit code. */
export function doctor(
  stateDir: string,
  write: (text: string) => void = (text) => process.stdout.write(text),
): number {
  const results = runChecks(stateDir);
  write(`${formatChecks(results)}\n`);
  return results.some((result) => result.status === 'FAIL') ? 1 : 0;
}
