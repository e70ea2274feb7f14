// Lint: typescript-eslint's type-aware rules over every TypeScript file; formatting is prettier's job.
// Beside them, the folder import rules of DESIGN.md §2 and the folder READMEs (`folderImportRules`).
import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * Library folders: every other folder (`folder`) or single file (`folder/file.js`) they may import, and
 * the packages (`node:*` for any built-in). A library folder never imports a process folder, except a
 * file named here.
 */
const LIBRARY_FOLDERS = {
  // node:net: isIP and its kin, pure parsing of an address (the gateway's and egress's address rules).
  rules: { imports: [], packages: ['zod', 'node:net'] },
  // node:crypto: a derivation both ends of a wire compute alike (a preview's port token).
  // machines/sandbox-table.js: the sandbox's states, declared once, which the wire's schema takes.
  // rxjs: the resumable feed both the SDK and the control plane read sequenced streams with (no I/O).
  protocol: { imports: ['rules', 'machines/sandbox-table.js'], packages: ['zod', 'node:crypto', 'rxjs'] },
  machines: { imports: ['rules'], packages: ['xstate', 'zod'] },
  actors: { imports: ['machines'], packages: ['node:*', 'rxjs', 'xstate'] },
  gateway: {
    imports: ['rules', 'protocol', 'machines', 'actors'],
    packages: ['node:*', 'undici', 'xstate', 'rxjs'],
  },
  presets: { imports: ['rules'], packages: ['zod', 'node:fs'] },
  'runtime-drivers': { imports: ['machines', 'rules', 'protocol'], packages: ['node:crypto', 'zod'] },
  'sandbox-drivers': { imports: ['rules', 'protocol'], packages: ['node:*'] },
  templates: { imports: [], packages: ['node:*'] },
  // The Python SDK: no TypeScript of its own, so nothing a TypeScript file there could import.
  python: { imports: [], packages: [] },
};

/**
 * The inspector (`inspector/`, DESIGN.md §2): `build.mjs` bundles the page with esbuild; the page itself
 * (`inspector/page/`) runs in a browser, so it imports no package and, of `protocol/`, only types (a
 * value would bundle zod and the rules into it: `INSPECTOR_PAGE_SYNTAX` refuses it).
 */
const INSPECTOR_FOLDERS = {
  inspector: { imports: ['protocol'], packages: ['node:*', 'esbuild'] },
  'inspector/page': { imports: ['protocol'], packages: [] },
};

/**
 * Process folders may import any library folder and, of the other process folders, only what is named
 * here. What crosses a process (wire schemas, the error envelope, versions) lives in `protocol/`.
 */
const PROCESS_FOLDERS = {
  daemon: [],
  'control-plane': [],
  sdk: [],
  cli: ['control-plane', 'sdk'],
};

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Every top-level folder, so a new one is out of bounds for every folder above until it is listed.
 * `test/` and `bench/` may import anything; `examples/` only the published package.
 */
const TOP_FOLDERS = readdirSync(import.meta.dirname, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.') && entry.name !== 'node_modules')
  .map((entry) => entry.name);

/**
 * A specifier that leaves `folder` for a top-level folder it may not import. Specifiers are read as
 * written, `(../)+name/…`, at any depth; `NOT_NORMALIZED` keeps them in that form.
 */
function outOfBounds(folder, allowed) {
  const alternatives = TOP_FOLDERS.filter((other) => other !== folder && !allowed.includes(other)).map(
    (other) => {
      const files = allowed
        .filter((entry) => entry.startsWith(`${other}/`))
        .map((entry) => escape(entry.slice(other.length + 1)));
      return files.length === 0
        ? `${escape(other)}(?:/|$)`
        : `${escape(other)}(?:$|/(?!(?:${files.join('|')})$))`;
    },
  );
  return `^(?:\\.\\./)+(?:${alternatives.join('|')})`;
}

/** A package (bare specifier) not in `packages`. */
function foreignPackage(packages) {
  const allowed = packages.map((name) => (name === 'node:*' ? 'node:' : `${escape(name)}(?:/|$)`));
  return allowed.length === 0 ? '^(?![./])' : `^(?![./])(?!${allowed.join('|')})`;
}

/** `./../x`, `a/../b`, `.././x`, `..//x`: specifiers the folder rules could misread. */
const NOT_NORMALIZED =
  '^\\./\\.\\.?(?:/|$)|^(?:\\.\\./)+\\.(?:/|$)|(?:^|/)(?=[^/]*[^/.])[^/]+/(?:[^/]+/)*\\.\\.?(?:/|$)|//';

const readmes = (folder) => `${folder}/README.md and DESIGN.md §2`;
const describe = (entries) =>
  entries.length === 0
    ? 'nothing'
    : entries.map((entry) => (entry.endsWith('.js') ? entry : `${entry}/`)).join(', ');

/** Restrictions as `{ regex, message }`: what `folder` must not import. */
function restrictionsOf(folder) {
  const normalized = {
    regex: NOT_NORMALIZED,
    message:
      'Write the relative path without . or .. segments inside it: folder import rules read it as written.',
  };
  const selfReference = {
    regex: '^sdk(?:/|$)',
    message: 'Inside the repository, import the source file, not the package by its own name.',
  };
  const library = LIBRARY_FOLDERS[folder];
  if (library !== undefined) {
    return [
      normalized,
      selfReference,
      {
        regex: outOfBounds(folder, library.imports),
        message: `${folder}/ is a library folder: it may import ${describe(library.imports)} (${readmes(folder)}).`,
      },
      {
        regex: foreignPackage(library.packages),
        message: `${folder}/ may import the packages ${describe(library.packages)} (${readmes(folder)}).`,
      },
    ];
  }
  const inspector = INSPECTOR_FOLDERS[folder];
  if (inspector !== undefined) {
    const name = folder.split('/')[0];
    return [
      normalized,
      selfReference,
      {
        regex: outOfBounds(name, inspector.imports),
        message: `${folder}/ may import ${describe(inspector.imports)} (${readmes(name)}).`,
      },
      {
        regex: foreignPackage(inspector.packages),
        message: `${folder}/ may import the packages ${describe(inspector.packages)} (${readmes(name)}).`,
      },
    ];
  }
  const processImports = PROCESS_FOLDERS[folder];
  if (processImports !== undefined) {
    const imports = [...Object.keys(LIBRARY_FOLDERS), ...processImports];
    return [
      normalized,
      selfReference,
      {
        regex: outOfBounds(folder, imports),
        message: `${folder}/ is a process folder: it may import the library folders and, of the other process folders, ${describe(processImports)} (${readmes(folder)}).`,
      },
    ];
  }
  if (folder === 'examples') {
    return [
      {
        regex: '^(?:\\./)?\\.\\.(?:/|$)',
        message: "examples/ use the published package ('sdk', 'sdk/control-plane') as a caller would.",
      },
    ];
  }
  return [];
}

/** The same regex inside an esquery attribute selector. */
const selectorRegex = (regex) => `/${regex.replaceAll('/', '\\/')}/`;

/** `../protocol/…` at any depth: what the inspector page may import types from. */
const PROTOCOL = selectorRegex('^(?:\\.\\./)+protocol/');
const TYPES_ONLY =
  'inspector/page/ imports only types from protocol/ (`import type { … }`): a value would bundle zod and the rules into the page.';

/**
 * What the page's code must never do on top of its folder rules: take anything but types from
 * `protocol/`, or parse markup (sandbox output is hostile; every node is built with createElement and
 * textContent: `inspector/page/dom.ts`).
 */
const INSPECTOR_PAGE_SYNTAX = [
  { selector: `ImportDeclaration[importKind!='type'][source.value=${PROTOCOL}]`, message: TYPES_ONLY },
  { selector: `ExportNamedDeclaration[exportKind!='type'][source.value=${PROTOCOL}]`, message: TYPES_ONLY },
  { selector: `ExportAllDeclaration[exportKind!='type'][source.value=${PROTOCOL}]`, message: TYPES_ONLY },
  {
    selector: "NewExpression[callee.name='DOMParser']",
    message: 'The page never parses markup: build nodes with dom.ts.',
  },
  {
    selector:
      'MemberExpression[computed=true][property.value=/^(?:innerHTML|outerHTML|insertAdjacentHTML|srcdoc)$/]',
    message: 'The page never parses markup: build nodes with dom.ts.',
  },
  {
    selector: "CallExpression[callee.name=/^set(?:Timeout|Interval)$/][arguments.0.type='Literal']",
    message: 'A timer runs a function, never a string.',
  },
];

/** Markup sinks the page's code must never touch. */
const MARKUP_SINKS = [
  'innerHTML',
  'outerHTML',
  'insertAdjacentHTML',
  'createContextualFragment',
  'setHTMLUnsafe',
  'srcdoc',
]
  .map((property) => ({
    property,
    message: 'The page never parses markup: build nodes with dom.ts (textContent, createElement).',
  }))
  .concat(
    ['write', 'writeln'].map((property) => ({
      object: 'document',
      property,
      message: 'The page never writes markup: build nodes with dom.ts.',
    })),
  );

/**
 * One config per folder: static imports and re-exports (`no-restricted-imports`), `import()` and
 * `typeof import()` (`no-restricted-syntax`). test/unit/folder-imports.test.ts checks they fire.
 */
const folderImportRules = [
  ...Object.keys(LIBRARY_FOLDERS),
  ...Object.keys(PROCESS_FOLDERS),
  ...Object.keys(INSPECTOR_FOLDERS),
  'examples',
].map((folder) => {
  const restrictions = restrictionsOf(folder);
  return {
    files: [`${folder}/**/*.{ts,mts,cts,js,mjs,cjs}`],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: restrictions.map(({ regex, message }) => ({ regex, caseSensitive: true, message })) },
      ],
      'no-restricted-syntax': [
        'error',
        ...restrictions.map(({ regex, message }) => ({
          selector: `:matches(ImportExpression, TSImportType)[source.value=${selectorRegex(regex)}]`,
          message,
        })),
        ...(folder === 'inspector/page' ? INSPECTOR_PAGE_SYNTAX : []),
      ],
    },
  };
});

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', '.bench-build/', 'templates/sdk-agent/build/'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-unnecessary-condition': ['error', { allowConstantLoopConditions: true }],
      // `it.each(...)('x', (v) => expect(v)...)` reads better than braces around one assertion.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: {
      globals: {
        process: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        console: 'readonly',
        performance: 'readonly',
      },
    },
  },
  ...folderImportRules,
  // The inspector page runs in a browser under a strict CSP, on hostile data: no eval, no markup. It is
  // linted type-aware like the rest: the project service types these files with inspector/tsconfig.json
  // (the DOM library, no Node types), the nearest tsconfig that includes them.
  {
    files: ['inspector/page/**/*.ts'],
    rules: {
      'no-eval': 'error',
      'no-new-func': 'error',
      'no-restricted-properties': ['error', ...MARKUP_SINKS],
    },
  },
  // runtime_b's runner runs inside the sandbox on the template's own packages (deepagents, LangChain):
  // the repository's folder rules are about this package's layers, not about what a template carries.
  // A runtime's tests are tests: vitest, fixtures and test/support.
  {
    files: ['runtime-drivers/runtime-b/runner/**/*.mjs', 'runtime-drivers/*/test/**/*.ts'],
    rules: { 'no-restricted-imports': 'off', 'no-restricted-syntax': 'off' },
  },
);
