/** `S3Prefix`: where a sandbox's home directory is saved (SPEC "Persistence and pools"). */
import { z } from 'zod';
import { REGION } from '../rules/names.js';
import { httpUrlSchema, parseOptions } from '../rules/parse-options.js';

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
  /** The bucket's region; the AWS SDK's own chain (`AWS_REGION`, the profile) when absent. */
  region: z.string().regex(REGION, 'must be a region such as us-east-1').optional(),
  /**
   * An endpoint override for S3 and STS (an AWS-compatible server, as `SecretStore`'s `endpoint`);
   * buckets are then addressed by path. The AWS SDK's own (`AWS_ENDPOINT_URL…`) when absent.
   */
  endpoint: httpUrlSchema
    .refine(
      (url) =>
        url.startsWith('https://') ||
        /^http:\/\/(?:127\.\d+\.\d+\.\d+|\[::1\]|localhost)(?::\d+)?(?:\/|$)/.test(url),
      // Session tokens and signed role requests travel to it: in the clear only over loopback.
      'must be https (http only to a loopback address)',
    )
    .optional(),
});

/** Options of `S3Prefix`. */
export type S3PrefixOptions = z.input<typeof s3PrefixOptions>;

/**
 * A bucket, a key prefix and a name: the home directory is saved at `<prefix>/<name>/home.tar.gz`.
 * `Sandbox.create({ persist, executionRoleArn })` restores it; `sbx.checkpointFiles()` saves it.
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
  /** The bucket's region, when given. */
  readonly region: string | undefined;
  /** The S3 and STS endpoint override, when given. */
  readonly endpoint: string | undefined;

  constructor(options: S3PrefixOptions) {
    const o = parseOptions(s3PrefixOptions, options, 'S3Prefix');
    this.bucket = o.bucket;
    this.prefix = o.prefix;
    this.name = o.name;
    this.region = o.region;
    this.endpoint = o.endpoint;
    Object.freeze(this);
  }

  /** Object key of the saved home directory. */
  get key(): string {
    return `${this.prefix === '' ? '' : `${this.prefix}/`}${this.name}/home.tar.gz`;
  }
}
