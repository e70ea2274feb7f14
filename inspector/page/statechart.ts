/**
 * A machine's statechart as SVG, drawn from its definition (`statechart-layout.ts`): the current state
 * highlighted, and each transition as it happens shown on the edge it took and the state it reached.
 */
import type { MachineGraph } from '../../protocol/inspector-api.js';
import { s } from './dom.js';
import { isWithin, toneOf } from './machine-graph.js';
import { layoutMachine, type EdgeLayout } from './statechart-layout.js';

let charts = 0;

/** How long a taken edge and a reached state stay lit, ms. */
const FLASH_MS = 1100;

/** One machine's chart. */
export class Statechart {
  readonly element: SVGSVGElement;
  readonly #nodes = new Map<string, SVGGElement>();
  readonly #edges: { readonly layout: EdgeLayout; readonly element: SVGGElement }[] = [];
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  #current: string | null = null;

  constructor(graph: MachineGraph, title: string) {
    charts += 1;
    const marker = `arrow-${String(charts)}`;
    const takenMarker = `arrow-taken-${String(charts)}`;
    const layout = layoutMachine(graph);
    const { box } = layout;
    this.element = s('svg', {
      class: 'statechart',
      'data-testid': 'statechart',
      'data-machine': graph.id,
      viewBox: `${box.x} ${box.y} ${box.width} ${box.height}`,
      width: Math.round(box.width),
      height: Math.round(box.height),
      role: 'img',
      'aria-label': title,
    });
    const arrow = (id: string, className: string): SVGMarkerElement =>
      s(
        'marker',
        {
          id,
          class: className,
          viewBox: '0 0 10 10',
          refX: 9,
          refY: 5,
          markerWidth: 7,
          markerHeight: 7,
          orient: 'auto-start-reverse',
        },
        s('path', { d: 'M 0 0 L 10 5 L 0 10 z' }),
      );
    this.element.appendChild(
      s('defs', {}, arrow(marker, 'arrowhead'), arrow(takenMarker, 'arrowhead taken')),
    );

    // Containers first (behind), then the states inside them, then the edges over both.
    const ordered = [...layout.nodes.values()].sort(
      (a, b) => a.id.split('.').length - b.id.split('.').length || Number(b.container) - Number(a.container),
    );
    const statesLayer = s('g', { class: 'states' });
    for (const node of ordered) {
      const group = s('g', {
        class:
          `state ${node.container ? 'compound' : 'atomic'} ${node.type === 'final' ? 'final' : ''}`.trim(),
        'data-state-id': node.id,
      });
      group.appendChild(s('title', {}, node.id));
      group.appendChild(
        s('rect', {
          x: node.x,
          y: node.y,
          width: node.width,
          height: node.height,
          rx: node.container ? 10 : 8,
        }),
      );
      if (node.type === 'final') {
        group.appendChild(
          s('rect', {
            class: 'inner',
            x: node.x + 4,
            y: node.y + 4,
            width: node.width - 8,
            height: node.height - 8,
            rx: 5,
          }),
        );
      }
      const hasEntry = !node.container && node.entry.length > 0;
      if (hasEntry) {
        group.appendChild(
          s(
            'text',
            {
              x: node.x + node.width / 2,
              y: node.y + node.height - 11,
              class: 'entry',
              'text-anchor': 'middle',
            },
            `entry / ${node.entry.join(', ')}`,
          ),
        );
      }
      group.appendChild(
        node.container
          ? s('text', { x: node.x + 12, y: node.y + 18, class: 'name' }, node.key)
          : s(
              'text',
              {
                x: node.x + node.width / 2,
                y: hasEntry ? node.y + 21 : node.y + node.height / 2 + 4.5,
                class: 'name',
                'text-anchor': 'middle',
              },
              node.key,
            ),
      );
      if (node.initial) {
        const cy = node.y + (node.container ? 13 : node.height / 2);
        group.appendChild(s('circle', { class: 'initial', cx: node.x - 20, cy, r: 4.5 }));
        group.appendChild(
          s('path', {
            class: 'initial-arrow',
            d: `M ${node.x - 15} ${cy} L ${node.x - 1} ${cy}`,
            'marker-end': `url(#${marker})`,
          }),
        );
      }
      statesLayer.appendChild(group);
      this.#nodes.set(node.id, group);
    }
    this.element.appendChild(statesLayer);

    const edgesLayer = s('g', { class: 'edges' });
    for (const edge of layout.edges) {
      const group = s('g', {
        class: `edge ${edge.kind}`,
        'data-source': edge.source,
        'data-target': edge.target,
        'data-events': edge.transitions.map((transition) => transition.event).join(' '),
      });
      const details = edge.transitions.map((transition) => {
        const guard = transition.guard === null ? '' : ` [${transition.guard}]`;
        const actions = transition.actions.length === 0 ? '' : ` / ${transition.actions.join(', ')}`;
        return `${transition.event}${guard}${actions}`;
      });
      group.appendChild(s('title', {}, `${edge.source} → ${edge.target}\n${details.join('\n')}`));
      group.appendChild(s('path', { class: 'hit', d: edge.path }));
      group.appendChild(s('path', { class: 'line', d: edge.path, 'marker-end': `url(#${marker})` }));
      group.appendChild(s('path', { class: 'flash', d: edge.path, 'marker-end': `url(#${takenMarker})` }));
      const label = s('text', { class: 'label', x: edge.labelX, y: edge.labelY, 'text-anchor': edge.anchor });
      edge.lines.forEach((line, index) => {
        label.appendChild(s('tspan', { x: edge.labelX, dy: index === 0 ? 0 : 13 }, line));
      });
      group.appendChild(label);
      edgesLayer.appendChild(group);
      this.#edges.push({ layout: edge, element: group });
    }
    this.element.appendChild(edgesLayer);
  }

  /**
   * Highlights `state` (a dotted state id) as current; `travelling` marks a state from the past (time
   * travel) rather than the live one.
   */
  setCurrent(state: string | null, travelling = false): void {
    this.#current = state;
    this.element.classList.toggle('travelling', travelling);
    for (const [id, group] of this.#nodes) {
      group.classList.toggle('current', state === id);
      if (state === id) group.dataset.tone = toneOf(id);
      else delete group.dataset.tone;
      group.classList.toggle('current-ancestor', state !== null && state !== id && isWithin(state, id));
    }
    if (state !== null) this.element.dataset.current = state;
    else delete this.element.dataset.current;
  }

  get current(): string | null {
    return this.#current;
  }

  /** Shows a transition as it happens: the edge `event` took from `from` lights up, `to` pulses. */
  animate(from: string | null, event: string, to: string): void {
    const taken = this.#edgeTaken(from, event, to);
    if (taken !== undefined) this.#flash(taken, 'taken');
    const reached = this.#nodes.get(to);
    if (reached !== undefined && from !== to) this.#flash(reached, 'pulse');
  }

  /** Stops pending animations. */
  destroy(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }

  #edgeTaken(from: string | null, event: string, to: string): SVGGElement | undefined {
    const candidates = this.#edges.filter(
      ({ layout }) =>
        layout.transitions.some((transition) => transition.event === event) &&
        (from === null || isWithin(from, layout.source)),
    );
    const exact = candidates.find(({ layout }) =>
      from === to ? layout.kind === 'loop' : layout.kind !== 'loop' && isWithin(to, layout.target),
    );
    return (exact ?? candidates[0])?.element;
  }

  #flash(element: SVGGElement, className: string): void {
    element.classList.remove(className);
    // Restart the animation when the same edge is taken again within its second.
    void element.getBoundingClientRect();
    element.classList.add(className);
    const timer = setTimeout(() => {
      element.classList.remove(className);
      this.#timers.delete(timer);
    }, FLASH_MS);
    this.#timers.add(timer);
  }
}
