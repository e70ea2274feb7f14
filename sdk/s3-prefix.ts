/** `S3Prefix`: where a sandbox's home directory is saved (SPEC "Persistence and pools"). */
import { z } from 'zod';
import { parseOptions } from '../rules/parse-options.js';

const s3PrefixOptions = z.strictObject({
  bucket: z
    .string()
    .regex(/^(?!xn--)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be a bucket name: 3-63 characters [a-z0-9.-]')
    .refine((b) => !b.includes('..'), 'must not contain ..'),
  prefix: z
    .string()
    .max(900, 'must be at most 900 characters')
    .regex(
      /^(?:[A-Za-z0-9!_.*'()-]+(?:\/[A-Za-z0-9!_.*'()-]+)*)?$/,
      'must be key segments joined by /, with no leading, trailing or double /',
    ),
  name: z
    .string()
    .regex(
      /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/,
      'must be 1-128 characters [A-Za-z0-9._-], not starting with .',
    ),
});

/** Options of `S3Prefix`. */
export type S3PrefixOptions = z.input<typeof s3PrefixOptions>;

/**
 * A bucket, a key prefix and a name: the home directory is saved at `<prefix>/<name>/home.tar.gz`.
 *
 * @example
 * ```ts
 * new S3Prefix({ bucket: 'team-sandboxes', prefix: 'homes', name: 'alice' }).key; // 'homes/alice/home.tar.gz'
 * ```
 */
export class S3Prefix {
  /** Bucket name. */
  readonly bucket: string;
  /** Key prefix (may be empty). */
  readonly prefix: string;
  /** Name under the prefix. */
  readonly name: string;

  constructor(options: S3PrefixOptions) {
    const o = parseOptions(s3PrefixOptions, options, 'S3Prefix');
    this.bucket = o.bucket;
    this.prefix = o.prefix;
    this.name = o.name;
    Object.freeze(this);
  }

  /** Object key of the saved home directory. */
  get key(): string {
    return `${this.prefix === '' ? '' : `${this.prefix}/`}${this.name}/home.tar.gz`;
  }
}
