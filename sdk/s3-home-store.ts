/**
 * The saved home in S3, under the sandbox's execution role (SPEC Authentication 3): the caller's own
 * credentials (the AWS SDK's standard chain) assume `executionRoleArn` with STS, and the role's
 * temporary credentials make the S3 client, so the role, not the caller, is what reaches the bucket.
 * The AWS SDK is loaded on first use: importing the package loads no AWS code.
 *
 * Every failure is a `SandboxError` naming the bucket, key or role and the AWS error's name, never AWS
 * text or a credential.
 */
import { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { SandboxError, SdkError } from '../rules/errors.js';
import type { S3Prefix } from './s3-prefix.js';

/** Lifetime of the role's credentials: one save or restore, which starts with a new assume. */
const ROLE_SESSION_SECONDS = 3600;

/**
 * Multipart part size and parts in flight: what the SDK holds of an archive is a few parts, whatever
 * the home's size. 5 MiB is S3's smallest part; 10,000 of them (48 GiB) are more than any home holds (a
 * tmpfs of at most half the sandbox's memory).
 */
const PART_BYTES = 5 * 1024 * 1024;
const QUEUE = 2;

type S3Module = typeof import('@aws-sdk/client-s3');

/** An AWS error's name when it is a plain identifier (never its message). */
function awsName(error: unknown): string {
  const name = error instanceof Error ? error.name : '';
  return /^[A-Za-z][A-Za-z0-9_.]{0,63}$/.test(name) ? name : 'unknown error';
}

/** The home object of one `S3Prefix`, reached with the role's temporary credentials. */
export class S3HomeStore {
  readonly #location: S3Prefix;
  readonly #roleArn: string;
  readonly #aws: S3Module;
  readonly #client: S3Client;

  private constructor(location: S3Prefix, roleArn: string, aws: S3Module, client: S3Client) {
    this.#location = location;
    this.#roleArn = roleArn;
    this.#aws = aws;
    this.#client = client;
  }

  /**
   * Assumes the role and makes the S3 client with its credentials.
   *
   * @param sessionName - the role session's name (shows in the bucket owner's logs)
   * @throws SandboxError when the caller's credentials cannot assume the role
   */
  static async open(location: S3Prefix, roleArn: string, sessionName: string): Promise<S3HomeStore> {
    const [sts, aws] = await Promise.all([import('@aws-sdk/client-sts'), import('@aws-sdk/client-s3')]);
    const where = {
      ...(location.region === undefined ? {} : { region: location.region }),
      ...(location.endpoint === undefined ? {} : { endpoint: location.endpoint }),
    };
    const stsClient = new sts.STSClient(where);
    let credentials;
    try {
      const out = await stsClient.send(
        new sts.AssumeRoleCommand({
          RoleArn: roleArn,
          RoleSessionName: sessionName,
          DurationSeconds: ROLE_SESSION_SECONDS,
        }),
      );
      credentials = out.Credentials;
    } catch (error) {
      throw new SandboxError(
        `persist: the caller's credentials could not assume the execution role ${roleArn} (${awsName(error)})`,
      );
    } finally {
      stsClient.destroy();
    }
    const { AccessKeyId, SecretAccessKey, SessionToken, Expiration } = credentials ?? {};
    if (AccessKeyId === undefined || SecretAccessKey === undefined) {
      throw new SandboxError(`persist: assuming the execution role ${roleArn} gave no credentials`);
    }
    const client = new aws.S3Client({
      ...where,
      // An endpoint override is one host for every bucket (an AWS-compatible server).
      forcePathStyle: location.endpoint !== undefined,
      // The archive checks itself: gzip's CRC-32 and length of the whole content, verified by tar as it
      // extracts. S3's object checksum adds nothing, and AWS-compatible servers disagree on a multipart
      // object's (moto answers a composite one as if it covered the whole object).
      responseChecksumValidation: 'WHEN_REQUIRED',
      credentials: {
        accessKeyId: AccessKeyId,
        secretAccessKey: SecretAccessKey,
        ...(SessionToken === undefined ? {} : { sessionToken: SessionToken }),
        ...(Expiration === undefined ? {} : { expiration: Expiration }),
      },
    });
    return new S3HomeStore(location, roleArn, aws, client);
  }

  /**
   * Uploads `body` as the home object, multipart and as it is read. The object is replaced only when
   * the whole body was read without an error: a body that fails aborts the upload (its parts deleted)
   * and the object saved before stays as it was.
   *
   * @throws the body's own `SdkError` when it failed, else a `SandboxError` for S3's refusal
   */
  async upload(body: Readable): Promise<void> {
    const { Upload } = await import('@aws-sdk/lib-storage');
    const upload = new Upload({
      client: this.#client,
      params: {
        Bucket: this.#location.bucket,
        Key: this.#location.key,
        Body: body,
        ContentType: 'application/gzip',
      },
      partSize: PART_BYTES,
      queueSize: QUEUE,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (error) {
      if (error instanceof SdkError) throw error;
      throw this.#failure(error, 'write');
    }
  }

  /**
   * The saved home as it arrives from S3, or undefined when nothing was saved yet (`NoSuchKey`; telling
   * it from a denial needs `s3:ListBucket` on the bucket, else S3 answers `AccessDenied`).
   */
  async download(): Promise<Readable | undefined> {
    try {
      const out = await this.#client.send(
        new this.#aws.GetObjectCommand({ Bucket: this.#location.bucket, Key: this.#location.key }),
      );
      if (!(out.Body instanceof Readable)) throw new SandboxError('persist: S3 answered without a body');
      return out.Body;
    } catch (error) {
      if (error instanceof this.#aws.NoSuchKey) return undefined;
      if (error instanceof SdkError) throw error;
      throw this.#failure(error, 'read');
    }
  }

  /** Releases the client's connections. */
  close(): void {
    this.#client.destroy();
  }

  /** A `SandboxError` for an S3 refusal, naming the bucket, the key or the role. */
  #failure(error: unknown, verb: 'read' | 'write'): SandboxError {
    const name = awsName(error);
    const { bucket, key } = this.#location;
    const status = (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata
      ?.httpStatusCode;
    if (name === 'NoSuchBucket') return new SandboxError(`persist: bucket ${bucket} does not exist`);
    if (name === 'AccessDenied' || status === 403) {
      return new SandboxError(
        `persist: the execution role ${this.#roleArn} may not ${verb} s3://${bucket}/${key} (${name})`,
      );
    }
    return new SandboxError(`persist: could not ${verb} s3://${bucket}/${key} (${name})`);
  }
}
