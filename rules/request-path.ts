/**
 * The request-path rules of SPEC "In-sandbox gateway listener", step 1: one validator, used by the SDK
 * for allow rules and by the gateway for every request. It never normalizes and never throws.
 */

/** Why a path was refused, or that it was accepted. */
export type PathVerdict = { readonly ok: true } | { readonly ok: false; readonly reason: string };

const ACCEPTED: PathVerdict = Object.freeze({ ok: true });

function refuse(reason: string): PathVerdict {
  return { ok: false, reason };
}

// RFC 3986 pchar without ';' (ASCII codes), plus '/' and '%' which are checked separately.
const PATH_CHAR = new Uint8Array(128);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:@!$&'()*+,=/%") {
  PATH_CHAR[c.charCodeAt(0)] = 1;
}

function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 65 && code <= 70) return code - 55;
  if (code >= 97 && code <= 102) return code - 87;
  return -1;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Unicode Cc after one decode: U+0000–U+001F, U+007F, U+0080–U+009F (DESIGN.md §5). */
function isControl(code: number): boolean {
  return code <= 0x1f || (code >= 0x7f && code <= 0x9f);
}

function checkDecodedSegment(segment: string): PathVerdict {
  if (!segment.includes('%')) {
    // Only ASCII path characters here, so the decoded form is the segment itself.
    return segment === '.' || segment === '..' ? refuse('dot segment') : ACCEPTED;
  }
  const bytes: number[] = [];
  for (let i = 0; i < segment.length; i++) {
    const code = segment.charCodeAt(i);
    if (code === 37 /* % */) {
      bytes.push(hexValue(segment.charCodeAt(i + 1)) * 16 + hexValue(segment.charCodeAt(i + 2)));
      i += 2;
    } else {
      bytes.push(code);
    }
  }
  let decoded: string;
  try {
    decoded = strictUtf8.decode(Uint8Array.from(bytes));
  } catch {
    return refuse('segment is not valid UTF-8 once decoded');
  }
  if (decoded === '.' || decoded === '..') return refuse('dot segment');
  for (let i = 0; i < decoded.length; i++) {
    const code = decoded.charCodeAt(i);
    if (isControl(code)) return refuse('control character once decoded');
    if (code === 47 || code === 92 || code === 37 || code === 59) {
      return refuse('encoded slash, backslash, percent or semicolon');
    }
  }
  return ACCEPTED;
}

/**
 * Checks a request path (without the query) against SPEC's path rules: RFC 3986 path characters except
 * `;`, well-formed `%XX`, no empty segment but the last, and each segment decoded once valid UTF-8 with
 * no control character, slash, backslash, percent or semicolon, and not `.` or `..`.
 *
 * @example
 * ```ts
 * checkRequestPath('/v1/messages');   // { ok: true }
 * checkRequestPath('/v1/%2e%2e/x');   // { ok: false, reason: 'dot segment' }
 * ```
 */
export function checkRequestPath(path: string): PathVerdict {
  if (typeof path !== 'string' || path.charCodeAt(0) !== 47) return refuse('must start with /');
  for (let i = 0; i < path.length; i++) {
    const code = path.charCodeAt(i);
    if (code >= 128 || PATH_CHAR[code] !== 1) return refuse('character outside the allowed path characters');
    if (code === 37 && (hexValue(path.charCodeAt(i + 1)) < 0 || hexValue(path.charCodeAt(i + 2)) < 0)) {
      return refuse('malformed percent escape');
    }
  }
  const segments = path.split('/');
  for (let i = 1; i < segments.length; i++) {
    const segment = segments[i] ?? '';
    if (segment === '') {
      if (i !== segments.length - 1) return refuse('empty segment');
      continue;
    }
    const verdict = checkDecodedSegment(segment);
    if (!verdict.ok) return verdict;
  }
  return ACCEPTED;
}

/**
 * Why `basePath` cannot be a base path, or undefined: empty, or `/segment[/segment…]` with no trailing
 * slash, following the request-path rules (an `AgentModel`'s and a preset's base path).
 *
 * @example
 * ```ts
 * basePathProblem('/v1');   // undefined
 * basePathProblem('/v1/');  // 'must not end with /'
 * ```
 */
export function basePathProblem(basePath: string): string | undefined {
  if (basePath === '') return undefined;
  if (basePath.endsWith('/')) return 'must not end with /';
  const verdict = checkRequestPath(basePath);
  return verdict.ok ? undefined : verdict.reason;
}
