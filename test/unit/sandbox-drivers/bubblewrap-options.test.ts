/**
 * bubblewrap's options: the sandbox's view of its template as its /usr (writable where the sandbox user
 * owns it), /etc and /var/lib (read-only), never a host folder; where /opt and the agents' runtime come
 * in the list (notes/runtimes.md §0).
 */
import { describe, expect, it } from 'vitest';
import { AGENTS_DIR } from '../../../sandbox-drivers/namespace/agent-template.js';
import { bubblewrapArgs } from '../../../sandbox-drivers/namespace/bubblewrap-options.js';

const images = { root: '/run/sdk/views/i-1/merged', sdk: '/run/sdk/images/sdk-1' };
const memory = 512 * 2 ** 20;

/** Index of the option `name` followed by `values` (bwrap reads them in order). */
function indexOf(args: readonly string[], ...option: string[]): number {
  return args.findIndex((_, i) => option.every((part, j) => args[i + j] === part));
}

/** Targets of every bind (`--bind`, `--ro-bind`: source then target) under /opt. */
function optBindTargets(args: readonly string[]): number[] {
  return args.flatMap((arg, i) =>
    (arg === '--bind' || arg === '--ro-bind') && args[i + 2]?.startsWith('/opt/') === true ? [i] : [],
  );
}

describe('bubblewrap options', () => {
  it("binds the template's image, and nothing of the host's own folders", () => {
    const args = bubblewrapArgs(images, '/cg/user', memory);
    expect(indexOf(args, '--bind', '/run/sdk/views/i-1/merged/usr', '/usr')).toBeGreaterThanOrEqual(0);
    for (const [source, target] of [
      ['/run/sdk/views/i-1/merged/etc', '/etc'],
      ['/run/sdk/views/i-1/merged/var/lib', '/var/lib'],
    ] as const) {
      expect(indexOf(args, '--ro-bind', source, target)).toBeGreaterThanOrEqual(0);
    }
    const sources = args.flatMap((arg, i) =>
      arg === '--ro-bind' || arg === '--bind' ? [args[i + 1] ?? ''] : [],
    );
    expect(sources.filter((source) => !/^\/run\/sdk\/(images|views)\//.test(source))).toEqual(['/cg/user']);
  });

  it('makes /opt with --dir before any bind below it, so uid 1000 can reach /opt/agents', () => {
    const args = bubblewrapArgs({ ...images, agents: '/run/sdk/images/agents-1' }, '/cg/user', memory);
    const dir = indexOf(args, '--dir', '/opt');
    expect(dir).toBeGreaterThanOrEqual(0);
    const binds = optBindTargets(args);
    expect(binds.map((i) => args[i + 2])).toEqual(['/opt/sdk', AGENTS_DIR]);
    for (const bind of binds) expect(bind).toBeGreaterThan(dir);
  });

  it('binds the agents image read-only at /opt/agents only when there is one', () => {
    const withAgents = bubblewrapArgs({ ...images, agents: '/run/sdk/images/agents-1' }, '/cg/user', memory);
    expect(indexOf(withAgents, '--ro-bind', '/run/sdk/images/agents-1', '/opt/agents')).toBeGreaterThan(0);
    for (const agents of [undefined, {}]) {
      const args = bubblewrapArgs({ ...images, ...agents }, '/cg/user', memory);
      expect(args).not.toContain('/opt/agents');
      expect(indexOf(args, '--dir', '/opt')).toBeLessThan(indexOf(args, '--ro-bind', images.sdk, '/opt/sdk'));
    }
  });
});
