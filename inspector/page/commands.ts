/**
 * A sandbox's commands from sandboxd's `process` records: pid, command line, running or how it ended;
 * in the order they started, the list kept scrolled to the newest while it is at the bottom.
 */
import { fill, h, logTable } from './dom.js';
import { clockTime, truncate } from './format.js';
import type { SandboxRecord } from './sandbox-records.js';

interface Command {
  readonly pid: number;
  command: string | null;
  startedAt: number | null;
  endedAt: number | null;
  exitCode: number | null;
  signal: string | null;
}

/** Commands kept at most (the oldest are dropped). */
const MAX_COMMANDS = 200;

/** The commands table. */
export class CommandsPanel {
  readonly element: HTMLElement;
  readonly #body = h('tbody', { 'data-testid': 'commands' });
  readonly #empty = h('p', { class: 'muted small' }, 'No commands yet.');
  readonly #commands = new Map<number, Command>();
  #scheduled = false;

  constructor() {
    this.element = h(
      'div',
      {},
      logTable(['pid', 'command', 'started', 'status'], this.#body, true),
      this.#empty,
    );
  }

  /** A `process` record. */
  add(record: SandboxRecord): void {
    if (record.type !== 'process') return;
    let command = this.#commands.get(record.pid);
    if (command === undefined || (record.event === 'start' && command.endedAt !== null)) {
      // A pid seen again after its end is a new command.
      this.#commands.delete(record.pid);
      command = {
        pid: record.pid,
        command: null,
        startedAt: null,
        endedAt: null,
        exitCode: null,
        signal: null,
      };
      this.#commands.set(record.pid, command);
    }
    if (record.event === 'start') {
      command.command = record.command ?? command.command;
      command.startedAt = record.at;
    } else {
      command.endedAt = record.at;
      command.exitCode = record.exitCode ?? null;
      command.signal = record.signal ?? null;
    }
    while (this.#commands.size > MAX_COMMANDS) {
      const oldest = this.#commands.keys().next();
      if (oldest.done === true) break;
      this.#commands.delete(oldest.value);
    }
    // Records come in bursts (the backlog): draw once per frame.
    if (!this.#scheduled) {
      this.#scheduled = true;
      requestAnimationFrame(() => {
        this.#scheduled = false;
        this.#draw();
      });
    }
  }

  #draw(): void {
    const scroller = this.element.firstElementChild;
    const stick =
      scroller === null || scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 40;
    const rows = [...this.#commands.values()].map((command) => {
      const running = command.endedAt === null;
      const status = running
        ? h('span', { class: 'badge tone-good' }, 'running')
        : command.signal !== null
          ? h('span', { class: 'badge tone-bad' }, `signal ${command.signal}`)
          : h(
              'span',
              { class: `badge ${command.exitCode === 0 ? 'tone-done' : 'tone-bad'}` },
              `exit ${command.exitCode === null ? '?' : String(command.exitCode)}`,
            );
      return h(
        'tr',
        { 'data-pid': command.pid, 'data-running': running ? 'true' : 'false' },
        h('td', { class: 'num' }, String(command.pid)),
        h('td', { class: 'mono command' }, command.command === null ? '—' : truncate(command.command, 300)),
        h('td', { class: 'mono' }, command.startedAt === null ? '—' : clockTime(command.startedAt)),
        h('td', {}, status),
      );
    });
    fill(this.#body, ...rows);
    this.#empty.hidden = rows.length > 0;
    if (stick && scroller !== null) scroller.scrollTop = scroller.scrollHeight;
  }
}
