/**
 * `sbx.ports` (issue 28): preview URLs of the sandbox's loopback ports, on the control plane. A URL
 * carries its port's token in the query: open it in a browser (the token becomes a cookie scoped to
 * that sandbox and port, so the page's links, iframes and WebSockets work) or give it to a program
 * (which may send the token in the `x-sdk-preview-token` header instead). `expose(port, { public:
 * true })` lets anyone with the URL in, without a token.
 */
import { z } from 'zod';
import { portToken, previewPortSchema, previewUrlOf } from '../protocol/preview-wire.js';
import { AuthenticationError } from '../rules/errors.js';
import { parseOptions } from '../rules/parse-options.js';
import type { ControlPlaneClient } from './control-plane-client.js';

/** What the handle got from create or connect. */
export interface PortsAccess {
  /** The preview URL pattern, `{port}` standing for the port. */
  readonly previewUrl: string;
  /** What port tokens derive from; absent on a handle whose token the control plane refused. */
  readonly previewKey: string | undefined;
}

const exposeOptions = z.strictObject({ public: z.boolean() });
const exposedSchema = z.strictObject({ port: previewPortSchema, public: z.boolean() });
const publicPortsSchema = z.strictObject({ ports: z.array(exposedSchema) });

/** The preview URLs of one sandbox. */
export class SandboxPorts {
  readonly #plane: ControlPlaneClient;
  readonly #path: string;
  readonly #token: () => string;
  readonly #access: PortsAccess;

  /** @internal */
  constructor(plane: ControlPlaneClient, sandboxId: string, token: () => string, access: PortsAccess) {
    this.#plane = plane;
    this.#path = `/v1/sandboxes/${sandboxId}/previews`;
    this.#token = token;
    this.#access = access;
  }

  /**
   * The preview URL of `port`, its token in the query. Computed here, no call: the URL works while the
   * sandbox lives (a suspended one with auto-resume wakes on the first request), and is refused with
   * 410 once it has ended.
   *
   * @example
   * ```ts
   * await sbx.commands.run('python3 -m http.server 8000', { background: true });
   * console.log(sbx.ports.url(8000)); // http://127.0.0.1:8080/v1/sandboxes/<id>/ports/8000/?sdk_preview_token=…
   * ```
   * @throws InvalidArgumentError a port out of 1-65535
   * @throws AuthenticationError on a handle whose access token the control plane refused
   */
  url(port: number): string {
    return previewUrlOf(this.#access.previewUrl, this.#checked(port), this.token(port));
  }

  /**
   * The token of `port` alone (for a program's `x-sdk-preview-token` header). Never log it: it opens
   * that port of this sandbox to whoever holds it.
   *
   * @throws InvalidArgumentError, AuthenticationError as `url`
   */
  token(port: number): string {
    const key = this.#access.previewKey;
    if (key === undefined) {
      throw new AuthenticationError('this handle has no valid access token: it has no preview tokens');
    }
    return portToken(key, this.#checked(port));
  }

  /**
   * Makes `port` public (anyone with its URL, no token) or private again.
   *
   * @throws InvalidArgumentError before any call for a bad port or options
   */
  async expose(port: number, options: { readonly public: boolean }): Promise<void> {
    const checked = this.#checked(port);
    const body = parseOptions(exposeOptions, options, 'sbx.ports.expose');
    await this.#plane.call('PUT', `${this.#path}/${String(checked)}`, exposedSchema, {
      token: this.#token(),
      body,
    });
  }

  /** The ports made public. */
  async publicPorts(): Promise<number[]> {
    const { ports } = await this.#plane.call('GET', this.#path, publicPortsSchema, { token: this.#token() });
    return ports.map(({ port }) => port);
  }

  #checked(port: number): number {
    return parseOptions(previewPortSchema, port, 'sbx.ports', ['port']);
  }
}
