/**
 * Issue 29: modules import one way. No production module reaches itself again through imports that
 * load at run time (`import type` aside): the SDK's lifecycle knows nothing of the handle, as E2B's
 * `SandboxApi` knows nothing of its `Sandbox`, and no folder needs a deferred load or a constructor
 * handed over in a static block to break a circle.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const PRODUCTION = [
  'actors',
  'cli',
  'control-plane',
  'daemon',
  'gateway',
  'inspector',
  'machines',
  'presets',
  'protocol',
  'rules',
  'runtime-drivers',
  'sandbox-drivers',
  'sdk',
];

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => join(entry.parentPath, entry.name))
    .filter((path) => !path.includes('node_modules'));
}

/** The relative modules `file` loads at run time (type-only imports and exports left out). */
function runtimeImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const found: string[] = [];
  for (const statement of source.statements) {
    let specifier: string | undefined;
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
      const clause = statement.importClause;
      const named = clause?.namedBindings;
      const typesOnly =
        clause !== undefined &&
        (clause.phaseModifier === ts.SyntaxKind.TypeKeyword ||
          (clause.name === undefined &&
            named !== undefined &&
            ts.isNamedImports(named) &&
            named.elements.length > 0 &&
            named.elements.every((element) => element.isTypeOnly)));
      if (!typesOnly) specifier = statement.moduleSpecifier.text;
    } else if (
      ts.isExportDeclaration(statement) &&
      !statement.isTypeOnly &&
      statement.moduleSpecifier !== undefined &&
      ts.isStringLiteral(statement.moduleSpecifier)
    ) {
      specifier = statement.moduleSpecifier.text;
    }
    if (specifier?.startsWith('.') === true)
      found.push(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
  }
  return found;
}

/** The strongly connected components of more than one module, or of one that imports itself (Tarjan). */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    order.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!graph.has(target)) continue;
      if (!order.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(target) ?? 0));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node) ?? 0, order.get(target) ?? 0));
      }
    }
    if (low.get(node) !== order.get(node)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component);
  };
  for (const node of graph.keys()) if (!order.has(node)) visit(node);
  return found;
}

describe('the import graph', () => {
  it('has no circle of run-time imports in any production folder', () => {
    const graph = new Map<string, string[]>();
    for (const folder of PRODUCTION)
      for (const file of sourceFiles(join(ROOT, folder))) graph.set(file, runtimeImports(file));
    expect(graph.size).toBeGreaterThan(300);
    const circles = cycles(graph).map((component) => component.map((file) => relative(ROOT, file)).sort());
    expect(circles).toEqual([]);
  });

  it('finds a circle where there is one', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(cycles(graph).map((component) => component.sort())).toEqual([['a', 'b', 'c']]);
  });
});
