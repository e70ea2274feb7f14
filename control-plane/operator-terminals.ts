/**
 * The operator's terminals (issue 28, the inspector's terminal panel) on the control plane's API: each
 * call checked before anything happens, then made on the sandbox's sandboxd with the control plane's
 * credential (`daemon-terminals.ts`). Opening one resumes a suspended sandbox with auto-resume, as any
 * SDK call does; the others need it running (a frozen sandboxd would not answer).
 */
import type { ServerResponse } from 'node:http';
import {
  openedTerminalSchema,
  terminalInputSchema,
  terminalSizeRequestSchema,
} from '../protocol/terminal-wire.js';
import { parseOptions } from '../rules/parse-options.js';
import type { DaemonTarget } from './daemon-agent.js';
import {
  closeTerminal,
  openTerminal,
  relayTerminalEvents,
  resizeTerminal,
  typeInto,
} from './daemon-terminals.js';

/** What the terminals need of the control plane. */
export interface TerminalHost {
  /** sandboxd of a running sandbox with the control plane's credential, for a caller allowed there. */
  target(id: string, bearer: string | undefined): DaemonTarget;
  /** An SDK call's activity: resumes the sandbox when suspended with auto-resume. */
  activity(id: string, bearer: string | undefined): Promise<unknown>;
}

/** A pid from a path. */
function pidOf(text: string): number {
  return parseOptions(openedTerminalSchema.shape.pid, Number(text), 'terminal', ['pid']);
}

/** The terminals of every sandbox, for the sandbox's token or the operator key. */
export class OperatorTerminals {
  readonly #host: TerminalHost;

  constructor(host: TerminalHost) {
    this.#host = host;
  }

  /** Opens a terminal running a login shell as the sandbox user. */
  async open(id: string, body: unknown, bearer: string | undefined): Promise<{ pid: number }> {
    const size = parseOptions(terminalSizeRequestSchema, body, 'terminal');
    await this.#host.activity(id, bearer); // refuses a stranger before anything

    return { pid: await openTerminal(this.#host.target(id, bearer), size) };
  }

  /** Relays the terminal's output (replayed after `after`, then live) to `res`. */
  async events(
    id: string,
    pid: string,
    after: number | undefined,
    bearer: string | undefined,
    res: ServerResponse,
  ): Promise<void> {
    await relayTerminalEvents(this.#host.target(id, bearer), pidOf(pid), after, res);
  }

  /** Types the bytes of `body` (`{ data: base64 }`) into the terminal. */
  async input(id: string, pid: string, body: unknown, bearer: string | undefined): Promise<void> {
    const { data } = parseOptions(terminalInputSchema, body, 'terminal input');
    await typeInto(this.#host.target(id, bearer), pidOf(pid), Buffer.from(data, 'base64'));
  }

  /** Resizes the terminal. */
  async resize(id: string, pid: string, body: unknown, bearer: string | undefined): Promise<void> {
    const size = parseOptions(terminalSizeRequestSchema, body, 'terminal resize');
    await resizeTerminal(this.#host.target(id, bearer), pidOf(pid), size);
  }

  /** Ends the terminal's program. */
  async close(id: string, pid: string, bearer: string | undefined): Promise<void> {
    await closeTerminal(this.#host.target(id, bearer), pidOf(pid));
  }
}
