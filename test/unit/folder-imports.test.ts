/**
 * The folder import rules (DESIGN.md §2 and each folder's README, enforced in eslint.config.js) fire:
 * snippets placed at paths inside the folders are linted with the repository's own config, so a rule
 * that stops matching fails here instead of letting the next wrong import through `eslint .`.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const FOLDER_RULES = new Set(['no-restricted-imports', 'no-restricted-syntax']);

// The repository's config, only the two rules that carry the folder rules (they need no types).
const eslint = new ESLint({
  cwd: root,
  ruleFilter: ({ ruleId }) => FOLDER_RULES.has(ruleId),
  overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
});

/** Every problem ESLint reports for `code` as if it were the file at `path`. */
async function problems(path: string, code: string): Promise<{ ruleId: string | null; message: string }[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, path) });
  return (result?.messages ?? []).map(({ ruleId, message }) => ({ ruleId, message }));
}

async function expectRefused(path: string, code: string): Promise<string> {
  const found = await problems(path, code);
  expect(found.length).toBeGreaterThan(0);
  for (const { ruleId } of found) expect(FOLDER_RULES.has(ruleId ?? 'a parse error')).toBe(true);
  return found.map(({ message }) => message).join('\n');
}

describe('folder import rules', () => {
  it.each([
    ['a value', "import { AgentModel } from '../sdk/agent-model.js';"],
    ['a type', "import type { SecretGateway } from '../sdk/secret-gateway.js';"],
    ['a re-export', "export { vendorBGateway } from '../sdk/index.js';"],
    ['a re-export of everything', "export * from '../sdk/index.js';"],
    ['a dynamic import', "export const load = () => import('../sdk/index.js');"],
    ['an import type', "export type Sdk = typeof import('../sdk/index.js');"],
    ['the package by its own name', "import { vendorBGateway } from 'sdk';"],
    ['a path through ./', "import { Sandbox } from './../sdk/sandbox.js';"],
    ['a path through another folder', "import { Sandbox } from '../rules/../sdk/sandbox.js';"],
  ])('refuse presets/ importing sdk/: %s', async (_, code) => {
    const messages = await expectRefused('presets/probe.ts', code);
    expect(messages).toMatch(/presets\/|relative path|its own name/);
  });

  it('names the folder, what it may import and where the rule is written', async () => {
    const messages = await expectRefused('presets/probe.ts', "import { x } from '../sdk/agent-model.js';");
    expect(messages).toContain(
      'presets/ is a library folder: it may import rules/ (presets/README.md and DESIGN.md §2)',
    );
    expect(messages).toContain('presets/README.md and DESIGN.md §2');
  });

  it.each([
    ['presets/nested/deeper/probe.ts', "import { Sandbox } from '../../../sdk/sandbox.js';"],
    ['presets/probe.ts', "import { GatewayHost } from '../gateway/gateway-host.js';"],
    ['presets/probe.ts', "import { request } from 'undici';"],
    ['presets/probe.ts', "import { SecretsManager } from '@aws-sdk/client-secrets-manager';"],
    ['rules/probe.ts', "import { readFileSync } from 'node:fs';"],
    ['rules/probe.ts', "import { clock } from '../machines/clock.js';"],
    ['rules/probe.ts', "import { errorEnvelopeSchema } from '../protocol/error-envelope.js';"],
    ['protocol/probe.ts', "import { createServer } from 'node:http';"],
    ['protocol/probe.ts', "import { clock } from '../machines/clock.js';"],
    ['protocol/probe.ts', "import { TokenCheck } from '../daemon/token.js';"],
    ['protocol/probe.ts', "import { ControlPlane } from '../control-plane/control-plane.js';"],
    ['machines/probe.ts', "import { SANDBOXD_VERSION } from '../protocol/versions.js';"],
    ['machines/probe.ts', "import { GatewayHost } from '../gateway/gateway-host.js';"],
    ['machines/probe.ts', "import { readFileSync } from 'node:fs';"],
    ['gateway/probe.ts', "import { TokenCheck } from '../daemon/token.js';"],
    ['gateway/probe.ts', "import { ControlPlane } from '../control-plane/control-plane.js';"],
    ['actors/probe.ts', "import { ControlPlane } from '../control-plane/control-plane.js';"],
    ['runtime-drivers/probe.ts', "import { AgentSpec } from '../sdk/agent-spec.js';"],
    ['sandbox-drivers/namespace/probe.ts', "import { x } from '../../daemon/main.js';"],
    ['sandbox-drivers/namespace/probe.ts', "import { Sandbox } from '../../sdk/sandbox.js';"],
    ['sdk/probe.ts', "import { ControlPlane } from '../control-plane/control-plane.js';"],
    ['sdk/probe.ts', "import { TokenCheck } from '../daemon/token.js';"],
    ['sdk/probe.ts', "import { openApiDocument } from '../control-plane/openapi.js';"],
    ['sdk/secret-store/probe.ts', "import { freePort } from '../../test/support/loopback.js';"],
    ['daemon/probe.ts', "import { openApiDocument } from '../control-plane/openapi.js';"],
    ['sandbox-drivers/namespace/probe.ts', "import { x } from '../../daemon/token.js';"],
    ['control-plane/probe.ts', "import { TokenCheck } from '../daemon/token.js';"],
    ['control-plane/probe.ts', "import { Sandbox } from '../sdk/index.js';"],
    ['control-plane/probe.ts', "import { x } from '../daemon/daemon-server.js';"],
    ['cli/probe.ts', "import { TokenCheck } from '../daemon/token.js';"],
    ['examples/probe.mjs', "import { Sandbox } from '../sdk/index.js';"],
    ['examples/probe.mjs', "import { Sandbox } from '../dist/sdk/index.js';"],
  ])('refuse %s: %s', async (path, code) => {
    await expectRefused(path, code);
  });

  it.each([
    [
      'presets/probe.ts',
      [
        "import { readFileSync } from 'node:fs';",
        "import { z } from 'zod';",
        "import { basePathProblem } from '../rules/request-path.js';",
        "import { parseUpstream } from '../rules/upstream.js';",
        "import { LIMITS } from '../rules/limits.js';",
        "import { loadCatalogue } from './catalogue.js';",
        "import bundled from './catalogue.json' with { type: 'json' };",
      ],
    ],
    [
      'machines/probe.ts',
      ["import { setup } from 'xstate';", "import { LIMITS } from '../rules/limits.js';"],
    ],
    ['rules/probe.ts', ["import { z } from 'zod';", "import { LIMITS } from './limits.js';"]],
    [
      'protocol/probe.ts',
      [
        "import { z } from 'zod';",
        "import { LIMITS } from '../rules/limits.js';",
        "import { SANDBOXD_VERSION } from './versions.js';",
      ],
    ],
    [
      'sandbox-drivers/namespace/seccomp/probe.ts',
      [
        "import { SANDBOXD_VERSION } from '../../../protocol/versions.js';",
        "import { x } from '../../sandbox-driver.js';",
        "import { y } from '../namespace-driver.js';",
      ],
    ],
    [
      'control-plane/probe.ts',
      [
        "import { SANDBOXD_VERSION } from '../protocol/versions.js';",
        "import { NamespaceDriver } from '../sandbox-drivers/namespace/namespace-driver.js';",
      ],
    ],
    [
      'sdk/probe.ts',
      [
        "import { x } from '../protocol/control-plane-api.js';",
        "import { GATEWAY_MIN_VERSION } from '../protocol/versions.js';",
        "import { PRESETS } from '../presets/builders.js';",
        "import { checkRequestPath } from '../rules/request-path.js';",
        "const aws = () => import('@aws-sdk/client-secrets-manager');",
      ],
    ],
    [
      'cli/probe.ts',
      [
        "import { ControlPlane } from '../control-plane/control-plane.js';",
        "import { AgentTemplate } from '../sdk/agent-template.js';",
      ],
    ],
    [
      'test/unit/probe.test.ts',
      ["import { x } from '../../daemon/main.js';", "import { y } from '../../cli/sdk.js';", "import 'sdk';"],
    ],
    ['bench/gateway/probe.ts', ["import { x } from '../../test/integration/support/test-ca.js';"]],
    ['examples/probe.mjs', ["import { Sandbox } from 'sdk';", "import { x } from 'sdk/control-plane';"]],
  ])('allow what %s may import', async (path, lines) => {
    expect(await problems(path, lines.join('\n'))).toEqual([]);
  });

  it.each([
    ['a value from protocol/', "import { machineGraphsSchema } from '../../protocol/inspector-api.js';"],
    [
      'a mixed import from protocol/',
      "import { type MachineGraph, machineGraphsSchema } from '../../protocol/inspector-api.js';",
    ],
    ['a package', "import { Observable } from 'rxjs';"],
    ['a Node built-in', "import { readFile } from 'node:fs';"],
    ['another folder', "import type { Sandbox } from '../../sdk/sandbox.js';"],
    ['markup', "export const f = (el: Element, text: string) => { el['innerHTML'] = text; };"],
    ['a parser', "export const f = (text: string) => new DOMParser().parseFromString(text, 'text/html');"],
    ['a string timer', "setTimeout('alert(1)', 10);"],
  ])('refuse what the inspector page may not use: %s', async (_, code) => {
    await expectRefused('inspector/page/probe.ts', code);
  });

  it('allow the inspector page types from protocol/ and its own modules', async () => {
    const lines = [
      "import type { MachineGraph } from '../../protocol/inspector-api.js';",
      "import { h } from './dom.js';",
      'export const f = (graph: MachineGraph) => h(graph.id);',
    ];
    expect(await problems('inspector/page/probe.ts', lines.join('\n'))).toEqual([]);
  });

  it('cover every top-level folder with a README except test/ and bench/', async () => {
    const folders = readdirSync(root, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(join(root, entry.name, 'README.md')))
      .map((entry) => entry.name)
      .filter((name) => name !== 'test' && name !== 'bench');
    expect(folders).toEqual(
      expect.arrayContaining(['presets', 'rules', 'protocol', 'sdk', 'daemon', 'examples']),
    );
    for (const folder of folders) {
      const file = folder === 'examples' ? 'probe.mjs' : 'probe.ts';
      await expectRefused(`${folder}/${file}`, "import { x } from '../bench/support/latency.js';");
    }
  });
});
