/**
 * Host uid/gid ranges for sandbox user namespaces (DESIGN.md §4 "Identity"). Each sandbox maps its ids
 * 0..65534 (`root`, `user` = 1000, `nobody`) to a range of its own, whose last id is its sandboxd's, that no host account and no other
 * sandbox uses, so per-uid kernel resources (keyrings, inotify, RLIMIT_NPROC, /proc access, signals)
 * are separate per sandbox and host-owned files are never its own.
 *
 * Ranges are claimed host-wide, across every control plane on the host, with an exclusive create of
 * `/run/sdk/uid-ranges/<slot>` holding the claiming instance and sandbox. `/run` is emptied at boot,
 * when every sandbox is gone too.
 */
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Host ids a sandbox's slot holds. */
export const RANGE_SIZE = 65_536;

/**
 * Ids the sandbox's user namespace maps: 0..65534 inside. The slot's last host id is sandboxd's
 * (`sandboxdId`): no id inside the sandbox is it, so nothing there, root included, owns sandboxd's
 * processes or files.
 */
export const MAPPED_IDS = RANGE_SIZE - 1;

/** sandboxd's host uid and gid for the sandbox of `range`: the owner of its user namespace. */
export function sandboxdId(range: UidRange): number {
  return range.hostBase + MAPPED_IDS;
}

/** First host id of slot 0 (0x70000000: above the Debian subordinate-id defaults, below 2^31). */
export const FIRST_HOST_ID = 0x7000_0000;

/** Slots between FIRST_HOST_ID and 0x7FFE0000 (systemd's container range starts there). */
export const SLOTS = (0x7ffe_0000 - FIRST_HOST_ID) / RANGE_SIZE;

/** Where claims live. */
const CLAIMS_DIR = '/run/sdk/uid-ranges';

/** A claimed range. */
export interface UidRange {
  readonly slot: number;
  /** The host id of the sandbox's id 0; the sandbox's id n is `hostBase + n`. */
  readonly hostBase: number;
}

/** The host id range of a slot. */
function rangeOf(slot: number): UidRange {
  return { slot, hostBase: FIRST_HOST_ID + slot * RANGE_SIZE };
}

/** Ids named in the host's account databases (users, groups, subordinate ranges). */
function hostAccountIds(): { single: number[]; ranges: [number, number][] } {
  const single: number[] = [];
  const ranges: [number, number][] = [];
  for (const file of ['/etc/passwd', '/etc/group']) {
    for (const line of readLines(file)) {
      const id = Number(line.split(':')[2]);
      if (Number.isInteger(id)) single.push(id);
    }
  }
  for (const file of ['/etc/subuid', '/etc/subgid']) {
    for (const line of readLines(file)) {
      const [, start, count] = line.split(':').map(Number);
      if (Number.isInteger(start) && Number.isInteger(count)) ranges.push([start ?? 0, count ?? 0]);
    }
  }
  return { single, ranges };
}

function readLines(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split('\n');
  } catch {
    return [];
  }
}

/** True when no host account or subordinate range falls in the slot's ids. */
function slotIsFree(slot: number, accounts = hostAccountIds()): boolean {
  const { hostBase } = rangeOf(slot);
  const end = hostBase + RANGE_SIZE;
  if (accounts.single.some((id) => id >= hostBase && id < end)) return false;
  return !accounts.ranges.some(([start, count]) => start < end && start + count > hostBase);
}

/** The claim text of a sandbox. */
const claimText = (instance: string, sandboxId: string): string => `${instance} ${sandboxId}\n`;

/**
 * Claims a free range for `sandboxId` of driver `instance`.
 *
 * @throws Error when every slot is taken
 */
export function claimRange(instance: string, sandboxId: string): UidRange {
  mkdirSync(dirname(CLAIMS_DIR), { recursive: true, mode: 0o755 });
  mkdirSync(CLAIMS_DIR, { recursive: true, mode: 0o700 });
  const accounts = hostAccountIds();
  const start = Math.floor(Math.random() * SLOTS);
  for (let n = 0; n < SLOTS; n++) {
    const slot = (start + n) % SLOTS;
    if (!slotIsFree(slot, accounts)) continue;
    let fd: number;
    try {
      fd = openSync(join(CLAIMS_DIR, String(slot)), 'wx', 0o600);
    } catch {
      continue; // another sandbox holds it
    }
    try {
      writeSync(fd, claimText(instance, sandboxId));
    } finally {
      closeSync(fd);
    }
    return rangeOf(slot);
  }
  throw new Error('no free uid range for a sandbox');
}

/** The claims of one driver instance: sandbox id → range. */
export function claimsOf(instance: string): Map<string, UidRange> {
  const found = new Map<string, UidRange>();
  let entries: string[];
  try {
    entries = readdirSync(CLAIMS_DIR);
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const [owner, sandboxId] = readLines(join(CLAIMS_DIR, entry))[0]?.split(' ') ?? [];
    if (owner === instance && sandboxId !== undefined) found.set(sandboxId, rangeOf(Number(entry)));
  }
  return found;
}

/** Releases the range `sandboxId` of `instance` holds, if any (only a claim naming both is removed). */
export function releaseRange(instance: string, sandboxId: string): void {
  const range = claimsOf(instance).get(sandboxId);
  if (range === undefined) return;
  try {
    unlinkSync(join(CLAIMS_DIR, String(range.slot)));
  } catch {
    // already released
  }
}
