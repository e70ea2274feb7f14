/** What the egress filter records of a decision (protocol/daemon-events.ts `egress`). */

/** A refused DNS question or connection. */
export interface EgressRefusal {
  readonly via: 'dns' | 'tls' | 'http';
  /** The name asked for (lower case), or `''` when a connection named none. */
  readonly name: string;
  /** The entry or mode that refused it, or why no rule could apply (`no server name`). */
  readonly rule: string;
  /** The port sandbox code dialled (a connection's; the address is not known past the redirect). */
  readonly port?: number;
}

/** A connection let through, once it ended. */
export interface EgressPassage {
  readonly via: 'tls' | 'http';
  readonly name: string;
  readonly rule: string;
  /** The upstream address sandboxd connected to. */
  readonly address: string;
  readonly port: number;
  /** Bytes both ways. */
  readonly bytes: number;
}
