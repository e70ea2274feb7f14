/**
 * Lays a machine graph out for drawing, from the definition alone: each container's states in columns
 * (layers by the longest path from its initial state once the edges that close a cycle are set aside,
 * final states in the last column), nested states inside their parent's box, and one edge per (source,
 * target) pair holding every transition between them. Edges between neighbouring columns run straight
 * across; backward edges and edges that skip a column run below the states in lanes of their own;
 * transitions that stay in a state are one loop above it.
 */
import type { MachineGraph } from '../../protocol/inspector-api.js';
import {
  childOf,
  edgesOf,
  LABEL_CHAR,
  labelWidth,
  LINE,
  lineOf,
  loopLines,
  type Edge,
} from './statechart-edges.js';

type StateNode = MachineGraph['states'][number];
type Transition = MachineGraph['transitions'][number];

/** A state's box, in the chart's coordinates. */
export interface NodeLayout {
  readonly id: string;
  readonly key: string;
  readonly type: StateNode['type'];
  readonly parent: string | null;
  x: number;
  y: number;
  width: number;
  height: number;
  /** Whether it holds other states (drawn as a container with its name on top). */
  readonly container: boolean;
  /** Whether it is its container's initial state (drawn with the initial marker). */
  readonly initial: boolean;
  /** Its entry actions, drawn as `entry / …` under its name. */
  readonly entry: readonly string[];
}

/** One drawn edge: every transition from `source` to `target` (the same for a loop). */
export interface EdgeLayout {
  readonly source: string;
  readonly target: string;
  readonly transitions: readonly Transition[];
  readonly kind: 'across' | 'below' | 'vertical' | 'loop';
  readonly path: string;
  /** Where the label's first line sits, and how it is anchored. */
  readonly labelX: number;
  readonly labelY: number;
  readonly anchor: 'middle' | 'start';
  readonly lines: readonly string[];
}

/** A laid-out machine. */
export interface ChartLayout {
  readonly nodes: ReadonlyMap<string, NodeLayout>;
  readonly edges: readonly EdgeLayout[];
  /** The chart's extent (it may start below zero: loops rise above the first row). */
  readonly box: { readonly x: number; readonly y: number; readonly width: number; readonly height: number };
}

const STATE_HEIGHT = 36;
const STATE_MIN_WIDTH = 92;
const STATE_CHAR = 7.6;
const PAD = 18;
const HEADER = 26;
const ROW_GAP = 42;
const MIN_COLUMN_GAP = 84;
const INITIAL_SPACE = 26;
const LOOP_RISE = 30;

/**
 * Lays out `graph`.
 *
 * @example
 * ```ts
 * const layout = layoutMachine(graphs.sandbox);
 * layout.nodes.get('suspended'); // { x, y, width, height, ... }
 * ```
 */
export function layoutMachine(graph: MachineGraph): ChartLayout {
  const ids = new Set(graph.states.map((state) => state.id));
  const parents = new Map(graph.states.map((state) => [state.id, state.parent] as const));
  const children = new Map<string | null, StateNode[]>();
  for (const state of graph.states) {
    const parent = state.parent !== null && ids.has(state.parent) ? state.parent : null;
    children.set(parent, [...(children.get(parent) ?? []), state]);
  }
  const edges = edgesOf(graph, ids);
  const loopsOf = new Map<string, Edge>();
  for (const edge of edges) if (edge.source === edge.target) loopsOf.set(edge.source, edge);

  const nodes = new Map<string, NodeLayout>();
  /** Positions relative to the container's content origin; made absolute at the end. */
  const relative = new Map<string, { x: number; y: number }>();

  const sizeOf = (container: string | null, initial: string | null): { width: number; height: number } => {
    const members = children.get(container) ?? [];
    if (members.length === 0) return { width: 0, height: 0 };
    const memberIds = new Set(members.map((member) => member.id));
    const sizes = new Map<string, { width: number; height: number }>();
    for (const member of members) {
      const inner = sizeOf(member.id, member.initial);
      const entryLine = member.entry.length === 0 ? '' : `entry / ${member.entry.join(', ')}`;
      const own = Math.max(
        STATE_MIN_WIDTH,
        member.key.length * STATE_CHAR + 30,
        entryLine.length * LABEL_CHAR + 24,
      );
      const holds = inner.width > 0;
      const size = holds
        ? { width: Math.max(own, inner.width + 2 * PAD), height: inner.height + HEADER + PAD }
        : { width: own, height: entryLine === '' ? STATE_HEIGHT : STATE_HEIGHT + 14 };
      sizes.set(member.id, size);
      nodes.set(member.id, {
        id: member.id,
        key: member.key,
        type: member.type,
        parent: member.parent,
        x: 0,
        y: 0,
        ...size,
        container: holds,
        initial: member.id === (initial ?? members[0]?.id),
        entry: member.entry,
      });
    }

    // Layers: a depth-first walk from the initial state sets aside the edges that close a cycle; each
    // state then sits one column after the furthest state that leads to it.
    const next = new Map<string, string[]>();
    for (const edge of edges) {
      const from = childOf(edge.source, container, parents);
      const to = childOf(edge.target, container, parents);
      if (from === null || to === null || from === to || !memberIds.has(from) || !memberIds.has(to)) continue;
      next.set(from, [...(next.get(from) ?? []), to]);
    }
    const order: string[] = [];
    const finished: string[] = [];
    const visited = new Set<string>();
    const onPath = new Set<string>();
    const forward = new Map<string, string[]>();
    const walk = (id: string): void => {
      visited.add(id);
      onPath.add(id);
      order.push(id);
      for (const to of next.get(id) ?? []) {
        if (onPath.has(to)) continue; // closes a cycle
        forward.set(id, [...(forward.get(id) ?? []), to]);
        if (!visited.has(to)) walk(to);
      }
      onPath.delete(id);
      finished.push(id);
    };
    const first = initial !== null && memberIds.has(initial) ? initial : (members[0]?.id ?? '');
    walk(first);
    for (const member of members) if (!visited.has(member.id)) walk(member.id);
    const rank = new Map<string, number>(order.map((id) => [id, 0]));
    for (const id of [...finished].reverse()) {
      for (const to of forward.get(id) ?? [])
        rank.set(to, Math.max(rank.get(to) ?? 0, (rank.get(id) ?? 0) + 1));
    }
    // Final states close the picture: a column of their own after every other state.
    const finals = members.filter((member) => member.type === 'final').map((member) => member.id);
    if (finals.length < members.length) {
      const last = Math.max(
        0,
        ...members.filter((member) => member.type !== 'final').map((member) => rank.get(member.id) ?? 0),
      );
      for (const id of finals) rank.set(id, last + 1);
    }
    // Edges inside this container that go back or skip a column run below its states: room for them.
    let belowSpace = 0;
    for (const edge of edges) {
      const from = childOf(edge.source, container, parents);
      const to = childOf(edge.target, container, parents);
      if (from === null || to === null || from === to || !memberIds.has(from) || !memberIds.has(to)) continue;
      if ((rank.get(to) ?? 0) !== (rank.get(from) ?? 0) + 1)
        belowSpace += 22 + edge.transitions.length * LINE;
    }

    const columnCount = Math.max(0, ...rank.values()) + 1;
    const columns: string[][] = Array.from({ length: columnCount }, () => []);
    for (const id of order) columns[rank.get(id) ?? 0]?.push(id);

    // The gap after a column fits the labels of the edges that cross it to the next one.
    const gaps = Array.from({ length: columnCount }, () => MIN_COLUMN_GAP);
    for (const edge of edges) {
      const from = childOf(edge.source, container, parents);
      const to = childOf(edge.target, container, parents);
      if (from === null || to === null || !memberIds.has(from) || !memberIds.has(to)) continue;
      const fromRank = rank.get(from) ?? 0;
      if ((rank.get(to) ?? 0) !== fromRank + 1) continue;
      const width = labelWidth(edge.transitions.map(lineOf)) + 28;
      gaps[fromRank] = Math.max(gaps[fromRank] ?? MIN_COLUMN_GAP, width);
    }

    const loopSpace = Math.max(
      0,
      ...members.map((member) => {
        const loop = loopsOf.get(member.id);
        return loop === undefined ? 0 : LOOP_RISE + 8 + loopLines(loop.transitions).length * LINE;
      }),
    );
    const columnHeight = (column: readonly string[]): number =>
      column.reduce((sum, id) => sum + (sizes.get(id)?.height ?? 0), 0) + ROW_GAP * (column.length - 1);
    const contentHeight = Math.max(...columns.map(columnHeight));
    let x = INITIAL_SPACE;
    columns.forEach((column, index) => {
      const width = Math.max(...column.map((id) => sizes.get(id)?.width ?? 0));
      let y = loopSpace + (contentHeight - columnHeight(column)) / 2;
      for (const id of column) {
        const size = sizes.get(id) ?? { width: 0, height: 0 };
        relative.set(id, { x: x + (width - size.width) / 2, y });
        y += size.height + ROW_GAP;
      }
      x += width + (index < columns.length - 1 ? (gaps[index] ?? MIN_COLUMN_GAP) : 0);
    });
    return { width: x, height: loopSpace + contentHeight + (container === null ? 0 : belowSpace) };
  };

  sizeOf(null, graph.initial);

  // Absolute positions: a child's content origin is its container's corner plus padding and header.
  const place = (container: string | null, originX: number, originY: number): void => {
    for (const member of children.get(container) ?? []) {
      const node = nodes.get(member.id);
      const at = relative.get(member.id);
      if (node === undefined || at === undefined) continue;
      node.x = originX + at.x;
      node.y = originY + at.y;
      if (node.container) place(member.id, node.x + PAD - INITIAL_SPACE / 2, node.y + HEADER);
    }
  };
  place(null, 0, 0);

  const extent = { minX: 0, minY: 0, maxX: 0, maxY: 0 };
  const include = (x: number, y: number): void => {
    extent.minX = Math.min(extent.minX, x);
    extent.minY = Math.min(extent.minY, y);
    extent.maxX = Math.max(extent.maxX, x);
    extent.maxY = Math.max(extent.maxY, y);
  };
  for (const node of nodes.values()) {
    include(node.x - INITIAL_SPACE, node.y);
    include(node.x + node.width, node.y + node.height);
  }

  const isInside = (inner: string, outer: string): boolean => inner.startsWith(`${outer}.`);
  const laid: EdgeLayout[] = [];
  const below: Edge[] = [];
  for (const edge of edges) {
    const a = nodes.get(edge.source);
    const b = nodes.get(edge.target);
    if (a === undefined || b === undefined) continue;
    if (edge.source === edge.target) {
      const lines = loopLines(edge.transitions);
      const cx = a.x + a.width / 2;
      const top = a.y;
      const path = `M ${cx - 12} ${top} C ${cx - 34} ${top - LOOP_RISE - 10}, ${cx + 34} ${top - LOOP_RISE - 10}, ${cx + 12} ${top}`;
      const labelY = top - LOOP_RISE - 6 - (lines.length - 1) * LINE;
      include(cx - labelWidth(lines) / 2, labelY - LINE);
      include(cx + labelWidth(lines) / 2, labelY);
      laid.push({ ...edge, kind: 'loop', path, labelX: cx, labelY, anchor: 'middle', lines });
      continue;
    }
    const lines = edge.transitions.map(lineOf);
    const aRight = a.x + a.width;
    const bRight = b.x + b.width;
    const nested = isInside(edge.source, edge.target) || isInside(edge.target, edge.source);
    // Another state's box between the two, on the straight line: go below instead.
    const blocked = [...nodes.values()].some(
      (node) =>
        !node.container &&
        node.id !== a.id &&
        node.id !== b.id &&
        node.x > aRight &&
        node.x + node.width < b.x &&
        node.y < Math.max(a.y, b.y) + STATE_HEIGHT &&
        node.y + node.height > Math.min(a.y, b.y),
    );
    if (!nested && b.x >= aRight - 1 && !blocked) {
      const y1 = a.y + (a.container ? HEADER / 2 : a.height / 2);
      const y2 = b.y + (b.container ? HEADER / 2 : b.height / 2);
      const mx = (aRight + b.x) / 2;
      const path = `M ${aRight} ${y1} C ${mx} ${y1}, ${mx} ${y2}, ${b.x} ${y2}`;
      const labelY = (y1 + y2) / 2 - 6 - (lines.length - 1) * LINE;
      include(mx - labelWidth(lines) / 2, labelY - LINE);
      include(mx + labelWidth(lines) / 2, labelY);
      laid.push({ ...edge, kind: 'across', path, labelX: mx, labelY, anchor: 'middle', lines });
    } else if (!nested && Math.min(aRight, bRight) > Math.max(a.x, b.x)) {
      // One above the other in the same column.
      const down = b.y > a.y;
      const x = Math.max(a.x, b.x) + Math.min(aRight - Math.max(a.x, b.x), bRight - Math.max(a.x, b.x)) / 2;
      const offset = down ? -10 : 10;
      const y1 = down ? a.y + a.height : a.y;
      const y2 = down ? b.y : b.y + b.height;
      const path = `M ${x + offset} ${y1} L ${x + offset} ${y2}`;
      const labelY = (y1 + y2) / 2 + 4 - ((lines.length - 1) * LINE) / 2;
      const labelX = x + offset + (down ? -8 : 8);
      laid.push({
        ...edge,
        kind: 'vertical',
        path,
        labelX: down ? labelX - labelWidth(lines) : labelX,
        labelY,
        anchor: 'start',
        lines,
      });
      include(labelX - labelWidth(lines), labelY);
      include(labelX + labelWidth(lines), labelY);
    } else {
      below.push(edge);
    }
  }

  // Edges below the states: each lane runs under the states it spans (but not under a container holding
  // both ends) and under the labels of the lanes already laid there.
  const span = (edge: Edge): number => {
    const a = nodes.get(edge.source);
    const b = nodes.get(edge.target);
    return a === undefined || b === undefined ? 0 : Math.abs(a.x + a.width / 2 - (b.x + b.width / 2));
  };
  // Edges inside a container first (their lanes stay inside its box), then by span.
  const depth = (edge: Edge): number => {
    const common = [...nodes.values()].filter(
      (node) => isInside(edge.source, node.id) && isInside(edge.target, node.id),
    );
    return common.length;
  };
  below.sort((one, other) => depth(other) - depth(one) || span(one) - span(other));
  const lanes: { left: number; right: number; bottom: number }[] = [];
  for (const edge of below) {
    const a = nodes.get(edge.source);
    const b = nodes.get(edge.target);
    if (a === undefined || b === undefined) continue;
    const lines = edge.transitions.map(lineOf);
    const leftToRight = a.x < b.x;
    const x1 = a.x + a.width / 2 + (leftToRight ? 10 : -10);
    const x2 = b.x + b.width / 2 + (leftToRight ? -10 : 10);
    const y1 = a.y + a.height;
    const y2 = b.y + b.height;
    const labelX = (x1 + x2) / 2;
    const left = Math.min(x1, x2, labelX - labelWidth(lines) / 2);
    const right = Math.max(x1, x2, labelX + labelWidth(lines) / 2);
    let base = Math.max(y1, y2);
    for (const node of nodes.values()) {
      const holdsBoth = isInside(edge.source, node.id) && isInside(edge.target, node.id);
      if (holdsBoth || node.x > right || node.x + node.width < left) continue;
      base = Math.max(base, node.y + node.height);
    }
    for (const lane of lanes)
      if (lane.left <= right && lane.right >= left) base = Math.max(base, lane.bottom);
    const lane = base + 20;
    // The curve's lowest point is three quarters of the way from the ends to its control points.
    const control = (lane - 0.125 * (y1 + y2)) / 0.75;
    const path = `M ${x1} ${y1} C ${x1} ${control}, ${x2} ${control}, ${x2} ${y2}`;
    const labelY = lane + LINE;
    const bottom = labelY + (lines.length - 1) * LINE + 4;
    laid.push({ ...edge, kind: 'below', path, labelX, labelY, anchor: 'middle', lines });
    lanes.push({ left, right, bottom });
    include(left, lane);
    include(right, bottom);
  }

  return {
    nodes,
    edges: laid,
    box: {
      x: extent.minX - 12,
      y: extent.minY - 12,
      width: extent.maxX - extent.minX + 24,
      height: extent.maxY - extent.minY + 24,
    },
  };
}
