/**
 * The egress tables as nftables reads them: every mode, empty and full sets, checked by the real `nft`
 * (`-c`, in a network namespace of its own, so nothing is applied anywhere), and what each sends where.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { EGRESS_PORTS } from '../../../protocol/egress-wire.js';
import type { EgressPolicy } from '../../../rules/egress-policy.js';
import {
  boxTable,
  checksNames,
  replacingTable,
  sandboxTable,
} from '../../../sandbox-drivers/namespace/egress-table.js';

/** `nft -c` of `rules` in a new, empty network namespace: throws with nft's message when it refuses. */
function nftChecks(rules: string): void {
  execFileSync('unshare', ['--net', 'nft', '-c', '-f', '-'], {
    input: rules,
    stdio: ['pipe', 'ignore', 'pipe'],
  });
}

const POLICIES: readonly EgressPolicy[] = [
  { mode: 'open', allow: [], deny: [] },
  { mode: 'closed', allow: [], deny: [] },
  { mode: 'open', allow: [], deny: ['ads.example', '192.0.2.0/24'] },
  { mode: 'allowlist', allow: [], deny: [] },
  {
    mode: 'allowlist',
    allow: [
      'pypi.org',
      '*.npmjs.org',
      '10.0.0.0/8',
      '10.1.0.0/16',
      ...Array.from({ length: 200 }, (_, i) => `172.16.${String(i)}.0/24`),
    ],
    deny: ['10.9.0.0/16'],
  },
];

const daemon = { hostUid: 2_100_000_000, port: 4000 };
const link = { sandboxd: '169.254.0.1', box: '169.254.0.2' };

describe.each(POLICIES)('the tables of %j', (policy) => {
  it('are read by nft, alone and as a replacement', () => {
    const sandbox = sandboxTable('100.96.0.2', daemon, policy);
    const box = boxTable('sdkgabc', 'sdksabc', link, 4000, policy);
    nftChecks(sandbox);
    nftChecks(box);
    nftChecks(`${sandbox}\n${replacingTable(sandbox)}`);
  });

  it("send every DNS question of sandbox code to sandboxd's resolver, HTTP and TLS only to check names", () => {
    const sandbox = sandboxTable('100.96.0.2', daemon, policy);
    expect(sandbox).toContain(`th dport 53 redirect to :${String(EGRESS_PORTS.dns)}`);
    expect(sandbox.includes(`redirect to :${String(EGRESS_PORTS.tls)}`)).toBe(checksNames(policy));
    expect(
      boxTable('sdkgabc', 'sdksabc', link, 4000, policy).includes(
        `${link.sandboxd}:${String(EGRESS_PORTS.tls)}`,
      ),
    ).toBe(checksNames(policy));
  });
});

it('checks names for an allowlist and for an open policy that denies domains, never otherwise', () => {
  expect(POLICIES.map(checksNames)).toEqual([false, false, true, true, true]);
});
