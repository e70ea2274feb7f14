/**
 * The operator's terminals on the control plane's API (`/v1/sandboxes/{id}/terminals`, the inspector's
 * terminal panel): open one of a size, type into it (bytes as base64 in JSON), resize and close it; its
 * output is its process event stream (`process-events.ts`), replayed from a cursor.
 */
import { z } from 'zod';
import { terminalSizeSchema } from './process-events.js';

/** Body of `POST /v1/sandboxes/{sandboxId}/terminals` and of its `resize`. */
export const terminalSizeRequestSchema = terminalSizeSchema;

/** Answer to opening a terminal: its pid in the sandbox. */
export const openedTerminalSchema = z.strictObject({ pid: z.number().int().positive() });

/** Keys typed at most in one call (a paste larger than this is sent in parts). */
export const TERMINAL_INPUT_MAX_BYTES = 16 * 1024;

/** Body of `POST /v1/sandboxes/{sandboxId}/terminals/{pid}/input`: the bytes typed, base64. */
export const terminalInputSchema = z.strictObject({
  data: z
    .base64()
    .min(1)
    .max(
      Math.ceil(TERMINAL_INPUT_MAX_BYTES / 3) * 4,
      `must be at most ${String(TERMINAL_INPUT_MAX_BYTES)} bytes`,
    ),
});
