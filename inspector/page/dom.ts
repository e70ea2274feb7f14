/**
 * DOM building without markup: every node comes from createElement / createElementNS, every string
 * reaches the page as a text node or an attribute value, never through an HTML parser. Sandbox output
 * is hostile, so this is the only way the page writes to the document.
 */

/** An attribute value: `false`, `null` and `undefined` leave the attribute out, `true` sets it empty. */
export type AttributeValue = string | number | boolean | null | undefined;

/** Attributes by name. */
export type Attributes = Readonly<Record<string, AttributeValue>>;

/** A child: a node, a string (made a text node), or nothing. */
export type Child = Node | string | number | null | undefined | false;

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * Names the page never sets from data: event handlers, URLs and inline style (CSP forbids the last
 * anyway). Navigation goes through click handlers and the router, so no element needs them.
 */
const FORBIDDEN_ATTRIBUTE = /^(?:on|href$|xlink:href$|src$|srcset$|action$|formaction$|style$|srcdoc$)/i;

function setAttributes(element: Element, attributes: Attributes | undefined): void {
  if (attributes === undefined) return;
  for (const [name, value] of Object.entries(attributes)) {
    if (FORBIDDEN_ATTRIBUTE.test(name)) throw new Error(`the page never sets the attribute ${name}`);
    if (value === false || value === null || value === undefined) continue;
    element.setAttribute(name, value === true ? '' : String(value));
  }
}

function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/**
 * An HTML element with attributes and children.
 *
 * @example
 * ```ts
 * h('td', { class: 'mono' }, record.command); // markup in `command` stays text
 * ```
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes?: Attributes,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  setAttributes(element, attributes);
  append(element, children);
  return element;
}

/** An SVG element with attributes and children. */
export function s<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attributes?: Attributes,
  ...children: Child[]
): SVGElementTagNameMap[K] {
  const element = document.createElementNS(SVG_NS, tag);
  setAttributes(element, attributes);
  append(element, children);
  return element;
}

/** Replaces the children of `parent`. */
export function fill(parent: Node & ParentNode, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** Sets or removes one attribute (same refusals as `h`). */
export function setAttribute(element: Element, name: string, value: AttributeValue): void {
  if (value === false || value === null || value === undefined) element.removeAttribute(name);
  else setAttributes(element, { [name]: value });
}

/** A button that runs `onClick`; `data-action` names it for tests and the stylesheet. */
export function button(
  label: string,
  onClick: (event: MouseEvent) => void,
  attributes: Attributes = {},
): HTMLButtonElement {
  const element = h('button', { type: 'button', ...attributes }, label);
  element.addEventListener('click', onClick);
  return element;
}

/** A card: a titled section of a view. */
export function card(title: string, attributes: Attributes = {}, ...children: Child[]): HTMLElement {
  return h(
    'section',
    { ...attributes, class: `card ${String(attributes.class ?? '')}`.trim() },
    h('h2', {}, title),
    ...children,
  );
}

/**
 * A log table: a header row of `columns` over `body` (rows are added to `body` by the caller), in a
 * scrolling box when `scroll`.
 */
export function logTable(columns: readonly string[], body: HTMLElement, scroll = false): HTMLElement {
  const table = h(
    'table',
    { class: 'log' },
    h('thead', {}, h('tr', {}, ...columns.map((name) => h('th', {}, name)))),
    body,
  );
  return scroll ? h('div', { class: 'scroll' }, table) : table;
}
