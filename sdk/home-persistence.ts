/**
 * Home persistence (SPEC "Persistence and pools", `sbx.checkpointFiles()`): the sandbox user's home
 * (`/home/user`, where opencode keeps its sessions, `~/.local/share/opencode`, and runtime_b its
 * checkpoints, `~/.local/share/sdk-runtime-b`) streamed between sandboxd's home archive
 * (`protocol/home-archive.ts`) and `s3://<bucket>/<prefix>/<name>/home.tar.gz`. Neither side ever
 * holds the whole archive: the SDK holds a few multipart parts, sandboxd only tar's pipe buffers.
 */
import { Readable } from 'node:stream';
import { z } from 'zod';
import { HOME_ARCHIVE_PATH, HOME_ARCHIVE_TYPE, archiveFailure } from '../protocol/home-archive.js';
import { SandboxError, SdkError } from '../rules/errors.js';
import { DaemonClient } from './daemon-client.js';
import type { S3Prefix } from './s3-prefix.js';
import type { LaunchedSandbox } from './sandbox-lifecycle.js';
import { S3HomeStore } from './s3-home-store.js';

/** Where one sandbox's home is saved, and the role that may reach it. */
export class HomePersistence {
  constructor(
    /** The saved home's place. */
    readonly location: S3Prefix,
    /** The role assumed for every S3 call. */
    readonly executionRoleArn: string,
  ) {}

  /**
   * Saves the home: sandboxd's archive piped into a multipart upload that completes only when the
   * archive ended with tar's exit status 0. A failed save leaves the object saved before as it was.
   *
   * @throws SandboxError when the role, the bucket or tar failed
   */
  async save(daemon: DaemonClient, sandboxId: string): Promise<void> {
    // The role first: a denied one fails before tar reads a byte.
    const store = await S3HomeStore.open(this.location, this.executionRoleArn, sessionName(sandboxId));
    let archive: { body: Readable; trailers: Readonly<Record<string, unknown>> } | undefined;
    try {
      archive = await daemon.download(HOME_ARCHIVE_PATH);
      await store.upload(checked(archive.body, archive.trailers));
    } finally {
      // A failed upload leaves the response unread: ending it ends tar in the sandbox.
      archive?.body.destroy();
      store.close();
    }
  }

  /** `restore` into a sandbox just launched, before any handle on it exists. */
  restoreInto(launched: LaunchedSandbox): Promise<void> {
    const daemon = new DaemonClient({
      url: launched.daemonUrl,
      accessToken: launched.accessToken,
      requestTimeoutMs: launched.plane.requestTimeoutMs,
    });
    return this.restore(daemon, launched.sandboxId);
  }

  /**
   * Restores the saved home into the sandbox, or leaves it empty when nothing was saved yet.
   *
   * @throws SandboxError when the role or the bucket failed, the object broke off, or sandboxd refused
   *   the archive (tar failed on it)
   */
  async restore(daemon: DaemonClient, sandboxId: string): Promise<void> {
    const store = await S3HomeStore.open(this.location, this.executionRoleArn, sessionName(sandboxId));
    try {
      const body = await store.download();
      if (body === undefined) return;
      body.on('error', () => undefined); // told below, by `errored`
      try {
        await daemon.upload(HOME_ARCHIVE_PATH, body, HOME_ARCHIVE_TYPE, z.object({}));
      } catch (error) {
        if (body.errored !== null) {
          const { bucket, key } = this.location;
          throw new SandboxError(`persist: reading s3://${bucket}/${key} broke off`);
        }
        throw error;
      } finally {
        body.destroy();
      }
    } finally {
      store.close();
    }
  }
}

/** The persistence `Sandbox.create` options ask for, or undefined without `persist`. */
export function homePersistenceOf(options: {
  readonly persist?: S3Prefix | undefined;
  readonly executionRoleArn?: string | undefined;
}): HomePersistence | undefined {
  const { persist, executionRoleArn } = options;
  // The options' own check requires the role with `persist`.
  return persist === undefined || executionRoleArn === undefined
    ? undefined
    : new HomePersistence(persist, executionRoleArn);
}

/** The role session's name: which sandbox used the role (64 characters at most, `[\w+=,.@-]`). */
const sessionName = (sandboxId: string): string => `sdk-home-${sandboxId}`;

/**
 * The archive's bytes as a stream that fails at its end unless sandboxd's trailer says tar exited 0,
 * so the upload never completes on an archive tar did not finish (an unreadable file, a killed tar).
 */
function checked(body: Readable, trailers: Readonly<Record<string, unknown>>): Readable {
  async function* bytes(): AsyncGenerator<Buffer> {
    try {
      for await (const chunk of body) yield chunk as Buffer;
    } catch (error) {
      if (error instanceof SdkError) throw error;
      throw new SandboxError('checkpointFiles: the home archive from the sandbox broke off');
    }
    // The trailers are read once the body has ended (undici fills them in before the end).
    const failure = archiveFailure(trailers);
    if (failure !== undefined) {
      throw new SandboxError(
        `checkpointFiles: the home archive failed in the sandbox (${failure}); the saved home was left as it was`,
      );
    }
  }
  return Readable.from(bytes(), { objectMode: false });
}
