/** The addresses of the sandbox's own interfaces, which the gateway never connects to. */
import { networkInterfaces } from 'node:os';

/**
 * Every address of every interface this process sees (inside a sandbox: its veth address and loopback).
 * An upstream that resolves to one of them would reach the sandbox itself, where sandbox code can
 * listen, so the gateway refuses them like metadata addresses.
 */
export function ownAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((entry) => entry.address));
}
