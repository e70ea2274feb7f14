/**
 * The DNS servers every sandboxd's resolver asks for the names sandbox code may reach (issue 27): the
 * control plane's option, else `SDK_DNS_SERVERS` (comma-separated `address[:port]`), else the host's own
 * `/etc/resolv.conf` servers. A loopback server of the host's (systemd-resolved's 127.0.0.53) is not
 * reachable from a sandbox's network namespace and is skipped: give such a host `--dns-server`.
 */
import { readFileSync } from 'node:fs';
import { isIPv4 } from 'node:net';
import { InvalidArgumentError } from '../rules/errors.js';

const SERVER = /^(\d{1,3}(?:\.\d{1,3}){3})(?::(\d{1,5}))?$/;

/** Checks `address[:port]` entries: IPv4 addresses, ports 1-65535. */
export function checkDnsServers(servers: readonly string[], field: string): readonly string[] {
  for (const server of servers) {
    const m = SERVER.exec(server);
    const port = m?.[2] === undefined ? 53 : Number(m[2]);
    if (m === null || !isIPv4(m[1] ?? '') || port < 1 || port > 65_535) {
      throw new InvalidArgumentError(`${field}: each DNS server is an IPv4 address with an optional :port`, {
        field,
      });
    }
  }
  return servers;
}

/** The servers of a `resolv.conf` text that a sandbox's namespace can reach (IPv4, not loopback). */
export function resolvConfServers(text: string): string[] {
  return text
    .split('\n')
    .map((line) => /^\s*nameserver\s+(\S+)/.exec(line)?.[1])
    .filter(
      (server): server is string => server !== undefined && isIPv4(server) && !server.startsWith('127.'),
    );
}

/** The default servers: `SDK_DNS_SERVERS`, else the host's `/etc/resolv.conf`. */
export function defaultDnsServers(env: NodeJS.ProcessEnv = process.env): readonly string[] {
  const given = env['SDK_DNS_SERVERS'];
  if (given !== undefined && given.trim() !== '') {
    return checkDnsServers(
      given.split(',').map((s) => s.trim()),
      'SDK_DNS_SERVERS',
    );
  }
  try {
    return resolvConfServers(readFileSync('/etc/resolv.conf', 'utf8'));
  } catch {
    return [];
  }
}
