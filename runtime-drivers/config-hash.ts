/**
 * The hash that names a runtime configuration: sha256 over the exact text written and each file's path
 * and content. Key order is meaning (last-match permissions), so nothing is sorted. The SDK skips a
 * write sandboxd already holds by it; sandboxd computes it again, so no caller can file a configuration
 * under another's hash.
 */
import { createHash } from 'node:crypto';

/** A file a configuration refers to. */
export interface ConfigFile {
  /** Absolute path in the sandbox. */
  readonly path: string;
  /** Its content. */
  readonly content: string;
}

/** The configuration's hash (hex). */
export function configHash(text: string, files: readonly ConfigFile[]): string {
  const hash = createHash('sha256').update(text);
  for (const file of files) hash.update(`\0${file.path}\0${file.content}`);
  return hash.digest('hex');
}
