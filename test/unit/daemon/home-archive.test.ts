/** sandboxd's tar command lines for the home archive (the flags its safety rests on, with the user's identity). */
import { describe, expect, it } from 'vitest';
import { archiveCommand, extractCommand } from '../../../daemon/home-archive.js';

describe('sandboxd’s tar command lines', () => {
  it('archive the whole home and extract without owners, with modes, keeping existing directories', () => {
    expect(archiveCommand("/home/o'brien")).toBe(
      "exec tar --create --sparse --gzip --file=- --directory='/home/o'\\''brien' .",
    );
    const extract = extractCommand('/home/user');
    for (const flag of ['--no-same-owner', '--preserve-permissions', '--no-overwrite-dir']) {
      expect(extract).toContain(flag);
    }
    // No flag that would let a member leave the home (`-P`) or follow symlinks out of it.
    expect(extract).not.toMatch(/ -P|--absolute-names|--dereference|--keep-directory-symlink/);
  });
});
