/**
 * Preview URLs (issue 28): a sandbox's `127.0.0.1:<port>` reached through the control plane, by path
 * (`/v1/sandboxes/<id>/ports/<port>/…`) or by host (`<port>-<id>.<domain>` under `sdk serve
 * --preview-domain`). A private port needs its port token, which the SDK derives from the sandbox's
 * preview key (given to the holder of the access token at create and connect): in the query
 * (`sdk_preview_token`, exchanged for an HTTP-only cookie on a browser's navigation), in a header, or in
 * that cookie. The control plane derives the same key from its own, so nothing is stored per port.
 */
import { createHmac } from 'node:crypto';
import { z } from 'zod';

/** The query parameter a link carries the port token in. */
export const PREVIEW_TOKEN_PARAM = 'sdk_preview_token';
/** The header a program sends the port token in. */
export const PREVIEW_TOKEN_HEADER = 'x-sdk-preview-token';
/** The cookie a browser gets for one sandbox's port. */
export const PREVIEW_COOKIE = 'sdk_preview';
/** Where `{port}` stands in a sandbox's preview URL pattern (`previewUrl` of create and connect). */
export const PORT_PLACEHOLDER = '{port}';

/** A port of the sandbox's loopback. */
export const previewPortSchema = z.number().int().min(1).max(65_535);

/** Body of `PUT /v1/sandboxes/{id}/previews/{port}`. */
export const exposePortRequestSchema = z.strictObject({
  /** Public: anyone with the URL may use it, no token asked. */
  public: z.boolean(),
});

/** A port's preview as the control plane answers it. */
export const previewPortInfoSchema = z.strictObject({
  port: previewPortSchema,
  public: z.boolean(),
});

/** Answer to `GET /v1/sandboxes/{id}/previews`: the ports made public. */
export const previewPortsSchema = z.strictObject({ ports: z.array(previewPortInfoSchema) });

/** The token of one port of the sandbox whose preview key is `previewKey`. */
export function portToken(previewKey: string, port: number): string {
  return createHmac('sha256', previewKey)
    .update(`port ${String(port)}`, 'utf8')
    .digest('base64url');
}

/** The preview URL of `port` from a sandbox's pattern, with the token in its query when given. */
export function previewUrlOf(pattern: string, port: number, token?: string): string {
  const url = pattern.replace(PORT_PLACEHOLDER, String(port));
  return token === undefined ? url : `${url}?${PREVIEW_TOKEN_PARAM}=${token}`;
}
