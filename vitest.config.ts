import { defineConfig } from 'vitest/config';

/** Test projects: `unit` and `property` run everywhere in seconds; `integration` arrives with the sandboxes. */
export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      { test: { name: 'property', include: ['test/property/**/*.test.ts'] } },
    ],
  },
});
