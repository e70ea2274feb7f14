/**
 * A driver instance: one per state folder. Its id is part of every resource the driver creates (network
 * namespace, nftables table, cgroups, uid range claim), so a driver lists, adopts and destroys only
 * sandboxes it created, and two control planes (or a control plane and a test suite) share a host.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** An instance id: 8 lowercase hex characters. */
const INSTANCE_ID = /^[a-f0-9]{8}$/;

/**
 * The instance id of the driver on `stateDir`, made (owner-only) on first use and kept there, so a
 * restarted control plane finds its sandboxes again.
 */
export function instanceIdOf(stateDir: string): string {
  const file = join(stateDir, 'instance-id');
  try {
    const id = readFileSync(file, 'utf8').trim();
    if (INSTANCE_ID.test(id)) return id;
  } catch {
    // first start on this folder
  }
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const id = randomBytes(4).toString('hex');
  writeFileSync(file, `${id}\n`, { mode: 0o600 });
  return id;
}
