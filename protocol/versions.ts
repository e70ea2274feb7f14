/**
 * Every version fact of the wire (DESIGN.md §3, SPEC "Versioning"): the sandboxd version this package
 * builds, and the first daemon or image version of each feature, compared with `meetsVersion`. A
 * template records the sandboxd version it was built with; the SDK reads a running daemon's from
 * `GET /v1/version`.
 */

/** The version this package's sandboxd reports: the package's own, the spec's current series. */
export const SANDBOXD_VERSION = '0.10.0';

/** The spec series of this package: a daemon older than it fails the `compatibility` check. */
export const SERIES_VERSION = '0.10.0';

/** The first daemon with secret gateways; an older one gives `UnimplementedError` (SPEC 0.6.0). */
export const GATEWAY_MIN_VERSION = '0.6.0';

/** The first daemon with the agent, `sbx.agent` (SPEC 0.8.0). */
export const AGENT_MIN_VERSION = '0.8.0';

/** Every gate above by feature, for checks that walk them all. */
export const VERSION_GATES = Object.freeze({
  series: SERIES_VERSION,
  gateways: GATEWAY_MIN_VERSION,
  agent: AGENT_MIN_VERSION,
});

/** `major.minor.patch` as numbers: each part's leading digits, 0 where there are none or no part. */
function partsOf(version: string): [number, number, number] {
  const parts = version.split('.').map((part) => Number.parseInt(part, 10) || 0);
  return [parts[0] ?? 0, parts[1] ?? 0, parts[2] ?? 0];
}

/** True when `actual` is `minimum` or later (major, minor, patch compared as numbers). */
export function meetsVersion(actual: string, minimum: string): boolean {
  const [a, b] = [partsOf(actual), partsOf(minimum)];
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
}
