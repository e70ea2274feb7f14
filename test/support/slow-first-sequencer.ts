/**
 * The order test files start in. Vitest runs a file it has no record of by size; on a fresh machine
 * (no record) that leaves the agent files, the longest by far, to the end, with one worker busy and the
 * others idle. These start first, longest first, as measured on a fresh machine of this kind; every
 * other file keeps vitest's own order after them.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Integration files that run longest, longest first. */
const LONGEST_FIRST = [
  'test/integration/agent/runtime-a.test.ts',
  'test/integration/agent/runtime-a-control.test.ts',
  'test/integration/agent/runtime-b.test.ts',
  'test/integration/daemon/files.test.ts',
  'test/integration/agent/providers.test.ts',
  'test/integration/sandbox/files.test.ts',
  'test/integration/sandbox/home-persistence.test.ts',
  'test/integration/inspector/inspector-page.test.ts',
  'test/integration/runtime-b-runner/runner.test.ts',
  'test/integration/runtime-b-runner/runner-sessions.test.ts',
];

/** Vitest's sequencer with the longest files moved to the front. */
export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification): number => {
      const at = LONGEST_FIRST.findIndex((file) => spec.moduleId.endsWith(file));
      return at === -1 ? LONGEST_FIRST.length : at;
    };
    const sorted = await super.sort(files);
    return sorted
      .map((spec, index) => ({ spec, index }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.index - b.index)
      .map(({ spec }) => spec);
  }
}
