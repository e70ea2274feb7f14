/** The OpenAPI 3.1 document of the control plane, generated from the zod schemas of the wire. */
import {
  exposePortRequestSchema,
  previewPortInfoSchema,
  previewPortsSchema,
} from '../protocol/preview-wire.js';
import { z } from 'zod';
import { processEventSchema } from '../protocol/process-events.js';
import {
  openedTerminalSchema,
  terminalInputSchema,
  terminalSizeRequestSchema,
} from '../protocol/terminal-wire.js';
import {
  connectedSandboxSchema,
  createdSandboxSchema,
  createSandboxRequestSchema,
  sandboxEventSchema,
  inspectionRecordSchema,
  sandboxInfoSchema,
  forkedSandboxesSchema,
  forkRequestSchema,
  setTimeoutRequestSchema,
  sandboxMetricsSchema,
  snapshotListSchema,
  snapshotSchema,
} from '../protocol/control-plane-api.js';
import { executionListSchema, agentWireLineSchema } from '../protocol/agent-wire.js';
import { errorEnvelopeSchema } from '../protocol/error-envelope.js';
import {
  inspectorSandboxesSchema,
  machineGraphsSchema,
  sandboxHistorySchema,
  sandboxRecordLineSchema,
} from '../protocol/inspector-api.js';
import { buildTemplateRequestSchema, templateBuildLineSchema } from '../protocol/template-api.js';
import { egressPolicySchema } from '../rules/egress-policy.js';
import { egressPolicyWire } from '../protocol/egress-wire.js';

const json = (schema: z.ZodType, io: 'input' | 'output' = 'output') => ({
  'application/json': { schema: z.toJSONSchema(schema, { io }) },
});
const errors = { default: { description: 'error envelope', content: json(errorEnvelopeSchema) } };
/** A sandbox's own calls: its access token, or the operator key. */
const bearer = [{ sandboxToken: [] }, { operatorKey: [] }];
/** Create, list, the all-sandbox feed and the inspection feed: the operator key only. */
const operator = [{ operatorKey: [] }];
const idParameter = [{ name: 'sandboxId', in: 'path', required: true, schema: { type: 'string' } }];
const afterParameter = {
  name: 'after',
  in: 'query',
  required: false,
  description: 'resume after this sequence number',
  schema: { type: 'integer', minimum: 0 },
};
const ndjson = (summary: string, schema: z.ZodType, security: unknown, parameters: unknown[]) => ({
  get: {
    summary,
    security,
    parameters,
    responses: {
      '200': {
        description: 'NDJSON',
        content: { 'application/x-ndjson': { schema: z.toJSONSchema(schema) } },
      },
      ...errors,
    },
  },
});
const action = (summary: string, schema: z.ZodType) => ({
  post: {
    summary,
    security: bearer,
    parameters: idParameter,
    responses: { '200': { description: 'the sandbox', content: json(schema) }, ...errors },
  },
});

const read = (summary: string, schema: z.ZodType, security: unknown, parameters: unknown[] = []) => ({
  get: {
    summary,
    security,
    parameters,
    responses: { '200': { description: summary, content: json(schema) }, ...errors },
  },
});
const terminalParameters = [
  ...idParameter,
  { name: 'pid', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } },
];
const terminalCall = (summary: string, body: z.ZodType) => ({
  post: {
    summary,
    security: bearer,
    parameters: terminalParameters,
    requestBody: { required: true, content: json(body, 'input') },
    responses: { '200': { description: 'done' }, ...errors },
  },
});
const executionParameters = [
  ...idParameter,
  { name: 'executionId', in: 'path', required: true, schema: { type: 'string' } },
];

/** What the inspector page reads, and the operator's agent calls (running sandboxes only). */
const inspectorPaths = {
  '/v1/machines': read('The machines as graphs, read from their definitions', machineGraphsSchema, operator),
  '/v1/inspector/sandboxes': read(
    'The sandbox table: timers, memory, routes, the running execution',
    inspectorSandboxesSchema,
    operator,
  ),
  '/v1/sandboxes/{sandboxId}/records': ndjson(
    "sandboxd's records of one sandbox (commands, gateway requests and responses, routes), each with its cursor",
    sandboxRecordLineSchema,
    bearer,
    [...idParameter, afterParameter],
  ),
  '/v1/sandboxes/{sandboxId}/history': read(
    "A sandbox's journaled events replayed, with the state after each (time travel)",
    sandboxHistorySchema,
    bearer,
    idParameter,
  ),
  '/v1/sandboxes/{sandboxId}/agent/executions': read(
    "The sandbox's agent executions (409 sandbox_suspended unless running)",
    executionListSchema,
    bearer,
    idParameter,
  ),
  '/v1/sandboxes/{sandboxId}/agent/executions/{executionId}/events': ndjson(
    "An execution's events from ?after=, relayed from sandboxd",
    agentWireLineSchema,
    bearer,
    [...executionParameters, afterParameter],
  ),
  '/v1/sandboxes/{sandboxId}/agent/executions/{executionId}/abort': {
    post: {
      summary: 'Abort an execution (no grace)',
      security: bearer,
      parameters: executionParameters,
      responses: { '200': { description: 'aborted', content: json(z.strictObject({})) }, ...errors },
    },
  },
};

/** Builds the document served at `/v1/openapi.json`. */
export function openApiDocument(version: string): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'sdk control plane', version },
    components: {
      securitySchemes: {
        sandboxToken: { type: 'http', scheme: 'bearer', description: 'the sandbox access token' },
        operatorKey: { type: 'http', scheme: 'bearer', description: 'the operator key (SDK_API_KEY)' },
      },
    },
    paths: {
      '/v1/sandboxes': {
        post: {
          summary: 'Create a sandbox',
          security: operator,
          requestBody: { required: true, content: json(createSandboxRequestSchema, 'input') },
          responses: { '201': { description: 'created', content: json(createdSandboxSchema) }, ...errors },
        },
        get: {
          summary: 'List sandboxes (ended ones too), filtered by state and metadata',
          security: operator,
          parameters: [
            {
              name: 'state',
              in: 'query',
              required: false,
              description: 'running, suspended or ended; repeated or comma-separated',
              schema: { type: 'array', items: { type: 'string', enum: ['running', 'suspended', 'ended'] } },
              style: 'form',
              explode: true,
            },
            {
              name: 'metadata',
              in: 'query',
              required: false,
              description: 'key=value pairs, URL-encoded in one parameter: only sandboxes holding them all',
              schema: { type: 'string' },
            },
          ],
          responses: {
            '200': { description: 'sandboxes', content: json(z.array(sandboxInfoSchema)) },
            ...errors,
          },
        },
      },
      '/v1/sandboxes/{sandboxId}': {
        get: {
          summary: 'Read a sandbox',
          security: bearer,
          parameters: idParameter,
          responses: { '200': { description: 'the sandbox', content: json(sandboxInfoSchema) }, ...errors },
        },
        delete: {
          summary: 'Kill a sandbox',
          security: bearer,
          parameters: idParameter,
          responses: { '200': { description: 'ended', content: json(sandboxInfoSchema) }, ...errors },
        },
      },
      '/v1/sandboxes/{sandboxId}/pause': action('Pause (suspend) a sandbox', sandboxInfoSchema),
      '/v1/sandboxes/{sandboxId}/connect': action(
        'Resume if suspended; where the daemon is',
        connectedSandboxSchema,
      ),
      '/v1/sandboxes/{sandboxId}/egress': {
        put: {
          summary: "Change a running sandbox's egress policy (open connections stay)",
          security: bearer,
          parameters: idParameter,
          requestBody: { required: true, content: json(egressPolicySchema, 'input') },
          responses: { '200': { description: 'applied', content: json(egressPolicyWire) }, ...errors },
        },
      },
      '/v1/sandboxes/{sandboxId}/timeout': {
        post: {
          summary: 'End the sandbox timeoutMs from now (never past 8 h from its creation)',
          security: bearer,
          parameters: idParameter,
          requestBody: { required: true, content: json(setTimeoutRequestSchema, 'input') },
          responses: { '200': { description: 'set', content: json(sandboxInfoSchema) }, ...errors },
        },
      },
      '/v1/sandboxes/{sandboxId}/metrics': read(
        "Samples of the sandbox's CPU, memory, disk and network, oldest first (never resumes it)",
        sandboxMetricsSchema,
        bearer,
        [
          ...idParameter,
          ...(['start', 'end'] as const).map((name) => ({
            name,
            in: 'query',
            required: false,
            description: `samples taken ${name === 'start' ? 'at or after' : 'at or before'} this instant, ms since the epoch`,
            schema: { type: 'integer', minimum: 0 },
          })),
        ],
      ),
      '/v1/sandboxes/{sandboxId}/terminals': {
        post: {
          summary: 'Open a terminal running a login shell as the sandbox user (resumes it with auto-resume)',
          security: bearer,
          parameters: idParameter,
          requestBody: { required: true, content: json(terminalSizeRequestSchema, 'input') },
          responses: { '201': { description: 'opened', content: json(openedTerminalSchema) }, ...errors },
        },
      },
      '/v1/sandboxes/{sandboxId}/terminals/{pid}/events': ndjson(
        "A terminal's output as process events (replayed after the cursor, then live)",
        processEventSchema,
        bearer,
        [...terminalParameters, afterParameter],
      ),
      '/v1/sandboxes/{sandboxId}/terminals/{pid}/input': terminalCall(
        'Type bytes into a terminal',
        terminalInputSchema,
      ),
      '/v1/sandboxes/{sandboxId}/terminals/{pid}/resize': terminalCall(
        'Resize a terminal',
        terminalSizeRequestSchema,
      ),
      '/v1/sandboxes/{sandboxId}/terminals/{pid}': {
        delete: {
          summary: "End a terminal's program",
          security: bearer,
          parameters: terminalParameters,
          responses: { '200': { description: 'ended' }, ...errors },
        },
      },
      '/v1/sandboxes/{sandboxId}/previews': read(
        "A sandbox's public ports (preview URLs without a token)",
        previewPortsSchema,
        bearer,
        idParameter,
      ),
      '/v1/sandboxes/{sandboxId}/previews/{port}': {
        put: {
          summary: 'Make a port public (its preview URL without a token) or private again',
          security: bearer,
          parameters: [
            ...idParameter,
            {
              name: 'port',
              in: 'path',
              required: true,
              schema: { type: 'integer', minimum: 1, maximum: 65535 },
            },
          ],
          requestBody: { required: true, content: json(exposePortRequestSchema, 'input') },
          responses: { '200': { description: 'applied', content: json(previewPortInfoSchema) }, ...errors },
        },
      },
      '/v1/sandboxes/{sandboxId}/activity': action(
        'A call about to reach sandboxd another way than the daemon proxy: resumes with autoResume',
        sandboxInfoSchema,
      ),
      '/v1/sandboxes/{sandboxId}/snapshots': {
        post: {
          summary: 'Take a snapshot of a sandbox (memory with gVisor, files with namespaces); it goes on',
          security: bearer,
          parameters: idParameter,
          responses: { '201': { description: 'taken', content: json(snapshotSchema) }, ...errors },
        },
        ...read("A sandbox's snapshots", snapshotListSchema, operator, idParameter),
      },
      '/v1/sandboxes/{sandboxId}/fork': {
        post: {
          summary: 'Take a snapshot and start count sandboxes from it (all or none)',
          security: operator,
          parameters: idParameter,
          requestBody: { required: true, content: json(forkRequestSchema, 'input') },
          responses: { '201': { description: 'started', content: json(forkedSandboxesSchema) }, ...errors },
        },
      },
      '/v1/snapshots': read('Every snapshot of this control plane', snapshotListSchema, operator),
      '/v1/snapshots/{snapshotId}': {
        delete: {
          summary: 'Delete a snapshot and its files',
          security: operator,
          parameters: [{ name: 'snapshotId', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { '200': { description: 'deleted', content: json(z.strictObject({})) }, ...errors },
        },
      },
      '/v1/sandboxes/{sandboxId}/events': ndjson(
        "One sandbox's state changes with sequence numbers; ends after ended",
        sandboxEventSchema,
        bearer,
        [...idParameter, afterParameter],
      ),
      '/v1/events': ndjson(
        "Every sandbox's state changes with sequence numbers",
        sandboxEventSchema,
        operator,
        [afterParameter],
      ),
      '/v1/inspect': ndjson(
        "Every actor transition (the inspection feed), each with its cursor: after ?after= as far back as the feed holds, else from each actor's latest transition; then live",
        inspectionRecordSchema,
        operator,
        [afterParameter],
      ),
      '/v1/templates': {
        post: {
          summary:
            'Build an agent template (SPEC "Image tooling"): a step line per step, then built or failed',
          security: operator,
          requestBody: { required: true, content: json(buildTemplateRequestSchema, 'input') },
          responses: {
            '200': {
              description: 'NDJSON',
              content: { 'application/x-ndjson': { schema: z.toJSONSchema(templateBuildLineSchema) } },
            },
            ...errors,
          },
        },
      },
      ...inspectorPaths,
    },
  };
}
