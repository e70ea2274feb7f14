/**
 * The terminal emulator's graphic rendition (`terminal-screen.ts`): the pen SGR (`ESC [ … m`) sets —
 * the 16 colours of the foreground and the background, bold, dim, italic, underline, inverse — and the
 * class names a cell drawn with it carries (the page's stylesheet colours them).
 */

/** Graphic rendition: what SGR sets. */
export interface Pen {
  readonly fg: number | null;
  readonly bg: number | null;
  readonly bold: boolean;
  readonly dim: boolean;
  readonly italic: boolean;
  readonly underline: boolean;
  readonly inverse: boolean;
}

/** The pen of a reset terminal. */
export const BLANK_PEN: Pen = {
  fg: null,
  bg: null,
  bold: false,
  dim: false,
  italic: false,
  underline: false,
  inverse: false,
};

/** The class names of a pen. */
export function styleOf(pen: Pen): string {
  const names: string[] = [];
  if (pen.fg !== null) names.push(`fg-${String(pen.fg)}`);
  if (pen.bg !== null) names.push(`bg-${String(pen.bg)}`);
  if (pen.bold) names.push('bold');
  if (pen.dim) names.push('dim');
  if (pen.italic) names.push('italic');
  if (pen.underline) names.push('underline');
  if (pen.inverse) names.push('inverse');
  return names.join(' ');
}

/** `pen` after an SGR sequence's `params` (none: a reset); parameters it does not know change nothing. */
export function withRendition(pen: Pen, params: readonly number[]): Pen {
  if (params.length === 0) return BLANK_PEN;
  let next: Pen = pen;
  for (let i = 0; i < params.length; i++) {
    const p = params[i] ?? 0;
    if (p === 0) next = BLANK_PEN;
    else if (p === 1) next = { ...next, bold: true };
    else if (p === 2) next = { ...next, dim: true };
    else if (p === 3) next = { ...next, italic: true };
    else if (p === 4) next = { ...next, underline: true };
    else if (p === 7) next = { ...next, inverse: true };
    else if (p === 22) next = { ...next, bold: false, dim: false };
    else if (p === 23) next = { ...next, italic: false };
    else if (p === 24) next = { ...next, underline: false };
    else if (p === 27) next = { ...next, inverse: false };
    else if (p >= 30 && p <= 37) next = { ...next, fg: p - 30 };
    else if (p >= 90 && p <= 97) next = { ...next, fg: p - 90 + 8 };
    else if (p === 39) next = { ...next, fg: null };
    else if (p >= 40 && p <= 47) next = { ...next, bg: p - 40 };
    else if (p >= 100 && p <= 107) next = { ...next, bg: p - 100 + 8 };
    else if (p === 49) next = { ...next, bg: null };
    else if (p === 38 || p === 48) {
      // 256 colours: the first 16 kept, the rest drawn in the default colour; true colour read past.
      const kind = params[i + 1];
      const colour = kind === 5 ? (params[i + 2] ?? 0) : null;
      const value = colour !== null && colour < 16 ? colour : null;
      next = p === 38 ? { ...next, fg: value } : { ...next, bg: value };
      i += kind === 5 ? 2 : kind === 2 ? 4 : 1;
    }
  }
  return next;
}
