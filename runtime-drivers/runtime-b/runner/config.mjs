/**
 * The runner's configuration, `SDK_AGENT_CONFIG` (JSON), checked before anything is built; a problem
 * is a `ConfigError` (its details on stderr, never on stdout).
 */
import { randomBytes } from 'node:crypto';
import { ConfigError } from './events.mjs';
import { PROVIDERS } from './models.mjs';

export const SESSION_ID = /^rda_[0-9a-f]{32}$/;
/** `package.module:build` (as the SDK's `RuntimeB` checks it). */
export const ENTRYPOINT = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_$][A-Za-z0-9_$]*$/;
export const TOOLS = ['read', 'edit', 'list', 'glob', 'grep', 'bash', 'task', 'todowrite'];

const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);
const isAction = (value) => value === 'allow' || value === 'deny';

function fail(message) {
  throw new ConfigError(message);
}

function checkModel(value, at) {
  if (!isObject(value)) fail(`${at}: must be an object`);
  if (!PROVIDERS.includes(value.provider)) fail(`${at}.provider: must be one of ${PROVIDERS.join(', ')}`);
  if (typeof value.id !== 'string' || value.id === '') fail(`${at}.id: must be a non-empty string`);
  if (typeof value.baseURL !== 'string' || !/^https?:\/\//.test(value.baseURL)) {
    fail(`${at}.baseURL: must be an http(s) URL`);
  }
  if (value.region !== undefined && typeof value.region !== 'string') fail(`${at}.region: must be a string`);
  return { provider: value.provider, id: value.id, baseURL: value.baseURL, region: value.region };
}

function checkPermissions(value, at) {
  if (value === undefined || value === null) return { default: 'allow', tools: {} };
  if (!isObject(value)) fail(`${at}: must be an object`);
  if (value.default !== undefined && !isAction(value.default)) fail(`${at}.default: must be allow or deny`);
  const tools = value.tools ?? {};
  if (!isObject(tools)) fail(`${at}.tools: must be an object`);
  for (const [tool, rule] of Object.entries(tools)) {
    if (isAction(rule)) continue;
    if (tool === 'bash' && isObject(rule) && Object.values(rule).every(isAction)) continue;
    fail(
      `${at}.tools.${tool}: must be allow or deny${tool === 'bash' ? ', or patterns to allow or deny' : ''}`,
    );
  }
  return { default: value.default ?? 'allow', tools };
}

/**
 * The checked configuration.
 *
 * @param {string | undefined} text - the value of `SDK_AGENT_CONFIG`
 */
export function parseConfig(text) {
  if (text === undefined || text === '') fail('SDK_AGENT_CONFIG is not set');
  let raw;
  try {
    raw = JSON.parse(text);
  } catch {
    fail('SDK_AGENT_CONFIG is not JSON');
  }
  if (!isObject(raw)) fail('SDK_AGENT_CONFIG: must be an object');
  const model = checkModel(raw.model, 'model');
  if (
    raw.smallModel !== undefined &&
    raw.smallModel !== null &&
    typeof raw.smallModel !== 'string' &&
    !isObject(raw.smallModel)
  ) {
    fail('smallModel: must be a model id or a model');
  }
  if (raw.instructions !== undefined && raw.instructions !== null && typeof raw.instructions !== 'string') {
    fail('instructions: must be a string');
  }
  const subagents = {};
  if (raw.subagents !== undefined && raw.subagents !== null) {
    if (!isObject(raw.subagents)) fail('subagents: must be an object');
    for (const [name, sub] of Object.entries(raw.subagents)) {
      const at = `subagents.${name}`;
      if (!/^[a-z0-9_-]{1,64}$/.test(name)) fail(`${at}: names are 1-64 characters [a-z0-9_-]`);
      if (!isObject(sub)) fail(`${at}: must be an object`);
      if (typeof sub.description !== 'string' || sub.description === '')
        fail(`${at}.description: must be a non-empty string`);
      if (typeof sub.instructions !== 'string') fail(`${at}.instructions: must be a string`);
      let subModel;
      if (typeof sub.model === 'string' && sub.model !== '') subModel = { ...model, id: sub.model };
      else if (isObject(sub.model)) subModel = checkModel({ ...model, ...sub.model }, `${at}.model`);
      else if (sub.model !== undefined && sub.model !== null)
        fail(`${at}.model: must be a model id or a model`);
      subagents[name] = {
        description: sub.description,
        instructions: sub.instructions,
        model: subModel,
        permissions:
          sub.permissions === undefined || sub.permissions === null
            ? undefined
            : checkPermissions(sub.permissions, `${at}.permissions`),
      };
    }
  }
  if (
    raw.entrypoint !== undefined &&
    raw.entrypoint !== null &&
    (typeof raw.entrypoint !== 'string' || !ENTRYPOINT.test(raw.entrypoint))
  ) {
    fail('entrypoint: must be package.module:function');
  }
  if (
    raw.sessionId !== undefined &&
    raw.sessionId !== null &&
    (typeof raw.sessionId !== 'string' || !SESSION_ID.test(raw.sessionId))
  ) {
    fail('sessionId: must be rda_ and 32 hex digits');
  }
  if (typeof raw.workdir !== 'string' || !raw.workdir.startsWith('/'))
    fail('workdir: must be an absolute path');
  return {
    model,
    smallModel: raw.smallModel ?? undefined,
    instructions:
      typeof raw.instructions === 'string' && raw.instructions !== '' ? raw.instructions : undefined,
    subagents,
    permissions: checkPermissions(raw.permissions, 'permissions'),
    entrypoint: raw.entrypoint ?? undefined,
    sessionId: raw.sessionId ?? `rda_${randomBytes(16).toString('hex')}`,
    reasoning: raw.reasoning === true,
    workdir: raw.workdir,
  };
}
