/** The name of an agent request (`agent-request.ts`), apart so the browser's page never sees node:crypto. */
import { createHash } from 'node:crypto';

/**
 * The name of a request: sha256 (hex) of its runtime's name, a newline and its exact text, so one spec
 * asked of two runtimes is two requests (sandboxd keeps them, and a prepared runtime, apart).
 */
export function agentRequestHash(runtime: string, text: string): string {
  return createHash('sha256').update(`${runtime}\n${text}`).digest('hex');
}
