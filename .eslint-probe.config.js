import base from './eslint.config.js';
export default [
  { ignores: ['templates/sdk-agent/build/'] },
  ...base,
  {
    files: ['templates/sdk-agent/runtime-b/**/*.mjs'],
    rules: { 'no-restricted-imports': 'off', 'no-restricted-syntax': 'off' },
  },
];
