import { expect, it } from 'vitest';
import { RUNTIME_A_ENVIRONMENT } from '../environment.js';

it('turns off the network attempts runtimes.md §1.4 names', () => {
  for (const name of ['MODELS_FETCH', 'AUTOUPDATE', 'SHARE', 'LSP_DOWNLOAD', 'DEFAULT_PLUGINS', 'FFF']) {
    expect(RUNTIME_A_ENVIRONMENT[`OPENCODE_DISABLE_${name}`]).toBe('1');
  }
  expect(RUNTIME_A_ENVIRONMENT.OPENCODE_PURE).toBe('1');
});
