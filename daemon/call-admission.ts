/**
 * The middleware every call of sandboxd's API passes before its route (the health check aside): the
 * credential check, then the call's record. The sandbox's token is admitted to every endpoint but the
 * control plane's own (`CONTROL_ONLY`); the control plane's credential to `CONTROL_ENDPOINTS`, and to the
 * calls by pid of the terminals it opened (`TERMINAL_ENDPOINTS`), nothing else. A call is recorded as
 * the sandbox's activity (`call`, the endpoint's pattern, never the path as sent) when the sandbox's
 * token made it, or the control plane typed into its terminal; the control plane watching (the
 * inspector) and reading the record stream are not activity.
 */
import type { IncomingMessage } from 'node:http';
import type { SequencedLog } from '../actors/sequenced-log.js';
import type { DaemonRecord } from '../protocol/daemon-events.js';
import { CONTROL_ENDPOINTS, CONTROL_ONLY, TERMINAL_ENDPOINTS } from './audit-records.js';
import { RequestError } from './request-error.js';
import type { TokenCheck } from './token.js';

/** The route a call matched: its pattern and parameters. */
export interface MatchedEndpoint {
  readonly endpoint: string;
  readonly params: Readonly<Record<string, string>>;
}

/** What the admission needs. */
export interface CallAdmissionOptions {
  readonly token: TokenCheck;
  readonly controlToken?: TokenCheck | undefined;
  /** Terminals the control plane's credential opened, while they run. */
  readonly operatorTerminals: ReadonlySet<number>;
  readonly audit: SequencedLog<DaemonRecord>;
}

/** Checks and records each call. */
export class CallAdmission {
  readonly #options: CallAdmissionOptions;

  constructor(options: CallAdmissionOptions) {
    this.#options = options;
  }

  /**
   * Admits a call (`match` undefined: no route matched it) and records it when it is the sandbox's
   * activity.
   *
   * @throws RequestError `unauthenticated` for a credential this endpoint does not admit
   */
  admit(req: IncomingMessage, match: MatchedEndpoint | undefined): void {
    const { token, controlToken, operatorTerminals, audit } = this.#options;
    const endpoint = match?.endpoint;
    const user = !(endpoint !== undefined && CONTROL_ONLY.has(endpoint)) && token.admits(req);
    const control =
      !user &&
      endpoint !== undefined &&
      (CONTROL_ENDPOINTS.has(endpoint) ||
        (TERMINAL_ENDPOINTS.has(endpoint) && operatorTerminals.has(Number(match?.params['pid'])))) &&
      controlToken?.admits(req) === true;
    if (!user && !control) {
      throw new RequestError('unauthenticated', 'missing or invalid sandbox access token');
    }
    const terminal =
      endpoint === 'POST /v1/terminals' || (endpoint !== undefined && TERMINAL_ENDPOINTS.has(endpoint));
    if ((user || (control && terminal)) && endpoint !== 'GET /v1/events') {
      audit.append({
        at: Date.now(),
        type: 'call',
        method: req.method ?? '',
        endpoint: endpoint ?? 'no such endpoint',
      });
    }
  }
}
