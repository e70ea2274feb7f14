/**
 * What sandboxd writes on a terminal helper's stdin (`sandbox-drivers/pty/sdk-pty.c`): frames, so input
 * and a resize never mix. `'i'` + u32 big-endian length + the bytes typed; `'r'` + length 4 + u16 cols +
 * u16 rows.
 */

/** Largest input one frame carries (the helper refuses more than 1 MiB a frame). */
const MAX_INPUT_FRAME = 64 * 1024;

function frame(type: 'i' | 'r', payload: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

/** Input typed into the terminal, as frames of at most 64 KiB each. */
export function inputFrames(data: Buffer): Buffer {
  const frames: Buffer[] = [];
  for (let off = 0; off < data.length; off += MAX_INPUT_FRAME) {
    frames.push(frame('i', data.subarray(off, off + MAX_INPUT_FRAME)));
  }
  return Buffer.concat(frames);
}

/** The terminal's new size. */
export function resizeFrame(cols: number, rows: number): Buffer {
  const payload = Buffer.alloc(4);
  payload.writeUInt16BE(cols, 0);
  payload.writeUInt16BE(rows, 2);
  return frame('r', payload);
}
