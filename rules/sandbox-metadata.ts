/**
 * A sandbox's metadata (issue 28): a string map given at create, shown by `getInfo`, `list` and the
 * inspector, and matched by `Sandbox.list({ metadata })`. Never a place for a secret: anyone who may
 * read the sandbox's facts reads it.
 */
import { z } from 'zod';

/** At most this many entries. */
export const MAX_METADATA_ENTRIES = 64;
const MAX_KEY = 128;
const MAX_VALUE = 1024;

/** No control characters: metadata is shown in pages and logs. */
const PRINTABLE = /^[^\p{Cc}]*$/u;

/** The metadata of a sandbox. */
export const sandboxMetadataSchema = z
  .record(
    z.string().min(1, 'a key must not be empty').max(MAX_KEY).regex(PRINTABLE, 'no control characters'),
    z.string().max(MAX_VALUE).regex(PRINTABLE, 'no control characters'),
  )
  .refine((map) => Object.keys(map).length <= MAX_METADATA_ENTRIES, {
    message: `at most ${String(MAX_METADATA_ENTRIES)} entries`,
  });

/** A sandbox's metadata. */
export type SandboxMetadata = Readonly<Record<string, string>>;

/** True when `metadata` holds every entry of `wanted`. */
export function matchesMetadata(metadata: SandboxMetadata, wanted: SandboxMetadata): boolean {
  return Object.entries(wanted).every(([key, value]) => metadata[key] === value);
}
