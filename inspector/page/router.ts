/**
 * Hash routes: `#/` the sandbox table, `#/sandboxes/<id>` one sandbox, `#/sandboxes/<id>/executions/<eid>`
 * one agent execution. Ids from the hash are checked before any view puts them in a URL.
 */
import { ID_PATTERN } from './api.js';

/** Where the page is. */
export type Route =
  | { readonly view: 'table' }
  | { readonly view: 'sandbox'; readonly sandboxId: string }
  | { readonly view: 'execution'; readonly sandboxId: string; readonly executionId: string }
  | { readonly view: 'not-found' };

/** The route a hash names. */
export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, '');
  if (path === '' || path === '/') return { view: 'table' };
  const parts = path.replace(/^\//, '').split('/');
  const [first, sandboxId, third, executionId, ...rest] = parts;
  if (first !== 'sandboxes' || sandboxId === undefined || !ID_PATTERN.test(sandboxId) || rest.length > 0) {
    return { view: 'not-found' };
  }
  if (third === undefined) return { view: 'sandbox', sandboxId };
  if (third === 'executions' && executionId !== undefined && ID_PATTERN.test(executionId)) {
    return { view: 'execution', sandboxId, executionId };
  }
  return { view: 'not-found' };
}

/** The hash of a route. */
export function hashOf(route: Route): string {
  switch (route.view) {
    case 'table':
    case 'not-found':
      return '#/';
    case 'sandbox':
      return `#/sandboxes/${route.sandboxId}`;
    case 'execution':
      return `#/sandboxes/${route.sandboxId}/executions/${route.executionId}`;
  }
}

/** Goes to a route. */
export function navigate(route: Route): void {
  window.location.hash = hashOf(route);
}
