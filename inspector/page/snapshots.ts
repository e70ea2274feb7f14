/**
 * A sandbox's snapshots (`GET /v1/sandboxes/:id/snapshots`): each with its kind, when it was taken and
 * what it takes on disk; "Take snapshot" for a running sandbox; per snapshot "Start a sandbox from
 * here" (`POST /v1/sandboxes` with `{ snapshot }`, then the new sandbox's view) and "Delete" after a
 * confirm step. The list outlives the sandbox: an ended one's snapshots can still start sandboxes.
 * Answers and refusals go to the status line as text.
 */
import type { CreateSandboxRequest, SandboxInfo, SnapshotInfo } from '../../protocol/control-plane-api.js';
import { failureText } from './actions.js';
import { ApiError, ID_PATTERN, sandboxPath, snapshotPath, type Api } from './api.js';
import { button, fill, h, logTable } from './dom.js';
import { bytes, clockTime } from './format.js';
import { navigate } from './router.js';
import type { StatusLine } from './status.js';

/** A snapshot taken elsewhere (the SDK, another page) shows within this long. */
const POLL_MS = 10_000;
/** A read asked for waits this long, so one read answers a burst of asks. */
const READ_DELAY_MS = 150;

/** `14:03:27`, with the date in front when it was not today. */
function takenAt(ms: number): string {
  const date = new Date(ms);
  const today = new Date();
  if (date.toDateString() === today.toDateString()) return clockTime(ms);
  const day = [date.getFullYear(), date.getMonth() + 1, date.getDate()]
    .map((part) => String(part).padStart(2, '0'))
    .join('-');
  return `${day} ${clockTime(ms)}`;
}

/** The snapshots card of one sandbox. */
export class SnapshotsPanel {
  readonly element: HTMLElement;
  readonly #body = h('tbody');
  readonly #note = h('p', { class: 'muted small' }, 'Loading…');
  readonly #take: HTMLButtonElement;
  readonly #api: Api;
  readonly #status: StatusLine;
  readonly #sandboxId: string;
  readonly #onStarted: () => void;
  #snapshots: readonly SnapshotInfo[] = [];
  #loaded = false;
  #error: string | null = null;
  #state = 'running';
  #busy = false;
  #confirming: string | null = null;
  #drawn = '';
  #destroyed = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #poll: ReturnType<typeof setInterval>;

  /** `onStarted` runs once a sandbox was started from a snapshot (the table should read it). */
  constructor(api: Api, status: StatusLine, sandboxId: string, onStarted: () => void) {
    this.#api = api;
    this.#status = status;
    this.#sandboxId = sandboxId;
    this.#onStarted = onStarted;
    this.#take = button(
      'Take snapshot',
      () => {
        this.#takeSnapshot();
      },
      { 'data-action': 'take-snapshot' },
    );
    this.element = h(
      'section',
      { class: 'card', 'data-testid': 'snapshots' },
      h('div', { class: 'card-head' }, h('h2', {}, 'Snapshots'), this.#take),
      logTable(['snapshot', 'kind', 'template', 'taken', 'size', ''], this.#body),
      this.#note,
    );
    this.#draw();
    this.refresh();
    this.#poll = setInterval(() => {
      this.refresh();
    }, POLL_MS);
  }

  /** The sandbox's state now: a snapshot is taken of a running sandbox only. */
  setState(state: string): void {
    if (state === this.#state) return;
    this.#state = state;
    this.#draw();
  }

  /**
   * Reads the list again soon (the sandbox changed, an action ended). A read already due is not put off:
   * a burst of the feed's records must not keep the list from being read.
   */
  refresh(): void {
    if (this.#timer !== undefined || this.#destroyed) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#api.json<{ snapshots: SnapshotInfo[] }>(sandboxPath(this.#sandboxId, '/snapshots')).then(
        (list) => {
          if (this.#destroyed) return;
          this.#snapshots = [...list.snapshots].sort((a, b) => b.createdAt - a.createdAt);
          this.#loaded = true;
          this.#error = null;
          if (!this.#snapshots.some((snapshot) => snapshot.snapshotId === this.#confirming)) {
            this.#confirming = null;
          }
          this.#draw();
        },
        (error: unknown) => {
          if (this.#destroyed) return;
          this.#snapshots = [];
          this.#error = `No snapshots to show (${error instanceof ApiError ? `${error.code}: ` : ''}${error instanceof Error ? error.message : 'unknown error'}).`;
          this.#draw();
        },
      );
    }, READ_DELAY_MS);
  }

  destroy(): void {
    this.#destroyed = true;
    clearTimeout(this.#timer);
    clearInterval(this.#poll);
  }

  /** Runs one call with every button off, then reads the list again. */
  #act(label: string, call: () => Promise<void>): void {
    this.#busy = true;
    this.#confirming = null;
    this.#draw();
    this.#status.info(`${label}…`);
    call()
      .catch((error: unknown) => {
        this.#status.error(failureText(label, error));
      })
      .finally(() => {
        this.#busy = false;
        if (this.#destroyed) return;
        this.#draw();
        this.refresh();
      });
  }

  #takeSnapshot(): void {
    this.#act('Take snapshot', async () => {
      const taken = await this.#api.json<SnapshotInfo>(sandboxPath(this.#sandboxId, '/snapshots'), {
        method: 'POST',
      });
      this.#status.info(`Took snapshot ${taken.snapshotId} of ${this.#sandboxId}.`);
    });
  }

  #start(snapshotId: string): void {
    this.#act('Start a sandbox from the snapshot', async () => {
      // Template, isolation and limits are the snapshot's; egress its sandbox's; clocks the defaults.
      const request: CreateSandboxRequest = { snapshot: snapshotId };
      // The answer holds the new sandbox's access token: the page reads its id and drops the rest.
      const created = await this.#api.json<Pick<SandboxInfo, 'sandboxId'>>('/v1/sandboxes', {
        method: 'POST',
        body: request,
      });
      const { sandboxId } = created;
      if (!ID_PATTERN.test(sandboxId)) throw new ApiError(0, 'invalid_id', 'the answer holds no sandbox id');
      this.#onStarted();
      // The router clears the status line when the view changes: say it once the new view is up.
      window.addEventListener(
        'hashchange',
        () => {
          this.#status.info(`Started ${sandboxId} from snapshot ${snapshotId}.`);
        },
        { once: true },
      );
      navigate({ view: 'sandbox', sandboxId });
    });
  }

  #delete(snapshotId: string): void {
    this.#act('Delete snapshot', async () => {
      await this.#api.json<unknown>(snapshotPath(snapshotId), { method: 'DELETE' });
      this.#status.info(`Deleted snapshot ${snapshotId}.`);
    });
  }

  #draw(): void {
    // Drawn again only when something shown changed: a poll never swaps a button under the pointer.
    const signature = JSON.stringify([
      this.#loaded,
      this.#error,
      this.#snapshots.map((snapshot) => [snapshot.snapshotId, snapshot.bytes]),
      this.#state,
      this.#busy,
      this.#confirming,
    ]);
    this.#take.disabled = this.#busy || this.#state !== 'running';
    if (signature === this.#drawn) return;
    this.#drawn = signature;
    const rows = this.#snapshots.map((snapshot) => {
      const id = snapshot.snapshotId;
      const controls =
        this.#confirming === id
          ? h(
              'span',
              { class: 'confirm', role: 'alertdialog' },
              h('span', {}, 'Delete this snapshot and its files?'),
              button(
                'Delete it',
                () => {
                  this.#delete(id);
                },
                { class: 'danger', 'data-action': 'confirm-delete-snapshot' },
              ),
              button(
                'Cancel',
                () => {
                  this.#confirming = null;
                  this.#draw();
                },
                { 'data-action': 'cancel-delete-snapshot' },
              ),
            )
          : h(
              'span',
              { class: 'row-actions' },
              button(
                'Start a sandbox from here',
                () => {
                  this.#start(id);
                },
                { 'data-action': 'start-from-snapshot', disabled: this.#busy },
              ),
              button(
                'Delete…',
                () => {
                  this.#confirming = id;
                  this.#draw();
                },
                { 'data-action': 'delete-snapshot', class: 'danger-outline', disabled: this.#busy },
              ),
            );
      return h(
        'tr',
        { 'data-snapshot-id': id, 'data-kind': snapshot.kind },
        h('td', { class: 'mono' }, id),
        h(
          'td',
          {},
          h(
            'span',
            {
              class: 'chip',
              title:
                snapshot.kind === 'memory'
                  ? 'processes, memory and files (gVisor)'
                  : 'files: its layer of the template and its home (no processes)',
            },
            snapshot.kind,
          ),
        ),
        h('td', { class: 'mono' }, `${snapshot.template} · ${snapshot.isolation}`),
        h(
          'td',
          { class: 'mono', title: new Date(snapshot.createdAt).toISOString() },
          takenAt(snapshot.createdAt),
        ),
        h('td', { class: 'num' }, bytes(snapshot.bytes)),
        h('td', {}, controls),
      );
    });
    fill(this.#body, ...rows);
    this.#note.hidden = rows.length > 0;
    this.#note.textContent =
      this.#error ??
      (!this.#loaded
        ? 'Loading…'
        : this.#state === 'running'
          ? 'No snapshots of this sandbox yet: "Take snapshot" keeps its files (with gVisor, its processes and memory too).'
          : 'No snapshots of this sandbox.');
  }
}
