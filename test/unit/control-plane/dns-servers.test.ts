/** The upstream DNS servers of sandboxes' resolvers (issue 27): what is accepted, and the defaults. */
import { describe, expect, it } from 'vitest';
import { checkDnsServers, defaultDnsServers, resolvConfServers } from '../../../control-plane/dns-servers.js';
import { InvalidArgumentError } from '../../../rules/errors.js';

describe('DNS servers', () => {
  it('are IPv4 addresses with an optional port', () => {
    expect(checkDnsServers(['10.0.0.2', '198.18.0.2:5353'], 'dnsServers')).toEqual([
      '10.0.0.2',
      '198.18.0.2:5353',
    ]);
    for (const bad of ['999.1.1.1', '1.2.3.4:0', '1.2.3.4:99999', '::1', 'dns.example', '1.2.3']) {
      expect(() => checkDnsServers([bad], 'dnsServers')).toThrow(InvalidArgumentError);
    }
  });

  it("default to SDK_DNS_SERVERS, else the host's resolv.conf without loopback or IPv6 servers", () => {
    expect(defaultDnsServers({ SDK_DNS_SERVERS: '127.0.0.1:9, 10.1.1.1' })).toEqual([
      '127.0.0.1:9',
      '10.1.1.1',
    ]);
    expect(() => defaultDnsServers({ SDK_DNS_SERVERS: 'nope' })).toThrow(InvalidArgumentError);
    const conf = 'search example\nnameserver 127.0.0.53\nnameserver 10.255.255.53\nnameserver fd00::1\n';
    expect(resolvConfServers(conf)).toEqual(['10.255.255.53']);
  });
});
