/** What the egress filter records of a decision (protocol/daemon-events.ts `egress`). */

/** A refused DNS question or connection. */
export interface EgressRefusal {
  /** The resolver, the name checks (`tls`, `http`), or the proxy (`proxy`). */
  readonly via: 'dns' | 'tls' | 'http' | 'proxy';
  /** The name asked for (lower case), or `''` when a connection named none. */
  readonly name: string;
  /** The entry or mode that refused it, or why no rule could apply (`no server name`). */
  readonly rule: string;
  /** The port sandbox code dialled (a connection's; the address is not known past the redirect). */
  readonly port?: number;
}

/** A connection let through, once it ended. */
export interface EgressPassage {
  /** The name checks, a proxy tunnel or plain request (`proxy`), or a brokered connection (`credential`). */
  readonly via: 'tls' | 'http' | 'proxy' | 'credential';
  readonly name: string;
  readonly rule: string;
  /** The upstream address sandboxd connected to (a brokered connection's pooled upstreams: none). */
  readonly address?: string;
  readonly port: number;
  /** Bytes both ways. */
  readonly bytes: number;
}
