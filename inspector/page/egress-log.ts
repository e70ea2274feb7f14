/**
 * A sandbox's egress (issue 27): its policy as the page shows it (mode, allow and deny entries, compact
 * with the full lists in a title), and the live log of the egress filter's decisions: time,
 * allowed/refused, via (dns, tls, http, the proxy, or `credential` for a brokered connection), name, address:port, rule, bytes. Names come from sandbox code
 * (a DNS question, a TLS server name, an HTTP Host): hostile text, so text nodes only. Never a header
 * value or a body: the records do not carry them.
 */
import type { InspectorSandbox } from '../../protocol/inspector-api.js';
import { fill, h, logTable } from './dom.js';
import { bytes, clockTime, truncate } from './format.js';
import type { SandboxRecord } from './sandbox-records.js';

/** A sandbox's egress policy. */
export type EgressPolicy = InspectorSandbox['egress'];

type EgressRecord = Extract<SandboxRecord, { type: 'egress' }>;

/** Egress log rows kept (newest first). */
const MAX_DECISIONS = 500;

/** Entries a compact list shows before `+N`. */
const SHOWN_ENTRIES = 2;

/** The tone of a mode: open reaches everything, closed nothing, an allowlist what it names. */
export function egressTone(mode: EgressPolicy['mode']): string {
  return mode === 'open' ? 'warn' : mode === 'closed' ? 'calm' : 'good';
}

/** `pypi.org, *.npmjs.org +3`; `none` for an empty list. */
function compactList(entries: readonly string[]): string {
  if (entries.length === 0) return 'none';
  const shown = entries.slice(0, SHOWN_ENTRIES).join(', ');
  const more = entries.length - SHOWN_ENTRIES;
  return more > 0 ? `${shown} +${String(more)}` : shown;
}

/** The entries that matter in a mode: an allowlist's allow and deny, open's deny, none when closed. */
function listsOf(policy: EgressPolicy): { allow: readonly string[] | null; deny: readonly string[] } {
  if (policy.mode === 'closed') return { allow: null, deny: [] };
  return { allow: policy.mode === 'allowlist' ? policy.allow : null, deny: policy.deny };
}

/** The policy in full, one line a list (a title: plain text). */
export function egressPolicyText(policy: EgressPolicy): string {
  const { allow, deny } = listsOf(policy);
  return [
    `egress: ${policy.mode}`,
    allow === null ? null : `allow: ${allow.length === 0 ? 'none' : allow.join(', ')}`,
    deny.length === 0 ? null : `deny: ${deny.join(', ')}`,
  ]
    .filter((line) => line !== null)
    .join('\n');
}

/**
 * The policy, compact: its mode as a badge, then `pypi.org, *.npmjs.org +3` for an allowlist and
 * `deny: …` when entries deny; the full lists in the title. `testId` names it for tests.
 */
export function egressPolicy(policy: EgressPolicy, testId?: string): HTMLElement {
  const { allow, deny } = listsOf(policy);
  return h(
    'span',
    {
      class: 'egress-policy',
      'data-testid': testId,
      'data-mode': policy.mode,
      title: egressPolicyText(policy),
    },
    h('span', { class: `badge tone-${egressTone(policy.mode)}` }, policy.mode),
    allow === null ? null : h('span', { class: 'mono small' }, compactList(allow)),
    deny.length === 0 ? null : h('span', { class: 'mono small' }, `deny: ${compactList(deny)}`),
  );
}

/** The sandbox table's chip: the mode, the lists in its title. */
export function egressChip(policy: EgressPolicy): HTMLElement {
  return h(
    'span',
    {
      class: `chip tone-${egressTone(policy.mode)}`,
      'data-mode': policy.mode,
      title: egressPolicyText(policy),
    },
    policy.mode,
  );
}

/** The words a policy matches in the table's filter. */
export function egressWords(policy: EgressPolicy): string {
  const { allow, deny } = listsOf(policy);
  return ['egress', policy.mode, ...(allow ?? []), ...deny].join(' ');
}

/** `10.0.0.5:443`, `10.0.0.5`, `:443` or `—`. */
function endpoint(record: EgressRecord): string {
  if (record.address === undefined && record.port === undefined) return '—';
  return `${record.address ?? ''}${record.port === undefined ? '' : `:${String(record.port)}`}`;
}

/** The live egress log, with the policy in force above it. */
export class EgressLog {
  readonly element: HTMLElement;
  readonly #policy = h('div', { class: 'egress-head' });
  readonly #counts = h('span', { class: 'muted small', 'data-testid': 'egress-counts' });
  readonly #body = h('tbody', { 'data-testid': 'egress-log' });
  readonly #empty = h('p', { class: 'muted small' }, 'No egress decisions yet.');
  #policyKey = '';
  #allowed = 0;
  #refused = 0;

  constructor() {
    this.element = h(
      'div',
      {},
      h('div', { class: 'egress-summary' }, this.#policy, this.#counts),
      logTable(['time', 'decision', 'via', 'name', 'address', 'rule', 'bytes'], this.#body, true),
      this.#empty,
    );
    this.#drawCounts();
  }

  /** The policy in force (drawn again only when it changed). */
  setPolicy(policy: EgressPolicy | null): void {
    const key = policy === null ? '' : JSON.stringify(policy);
    if (key === this.#policyKey) return;
    this.#policyKey = key;
    fill(this.#policy, policy === null ? null : egressPolicy(policy));
  }

  /** An `egress` record: one row on top. */
  add(record: SandboxRecord): void {
    if (record.type !== 'egress') return;
    const allowed = record.event === 'allowed';
    if (allowed) this.#allowed += 1;
    else this.#refused += 1;
    const row = h(
      'tr',
      { 'data-event': record.event, 'data-via': record.via },
      h('td', { class: 'mono' }, clockTime(record.at)),
      h('td', {}, h('span', { class: `badge tone-${allowed ? 'good' : 'bad'}` }, record.event)),
      h('td', { class: 'mono' }, record.via),
      h('td', { class: 'mono egress-name', title: record.name }, truncate(record.name, 160)),
      h('td', { class: 'mono' }, endpoint(record)),
      h('td', { class: 'mono egress-rule', title: record.rule }, truncate(record.rule, 80)),
      h('td', { class: 'num' }, record.bytes === undefined ? '—' : bytes(record.bytes)),
    );
    this.#body.prepend(row);
    while (this.#body.rows.length > MAX_DECISIONS) this.#body.lastElementChild?.remove();
    this.#empty.hidden = true;
    this.#drawCounts();
  }

  #drawCounts(): void {
    this.#counts.textContent =
      this.#allowed + this.#refused === 0
        ? ''
        : `${String(this.#allowed)} allowed · ${String(this.#refused)} refused`;
  }
}
