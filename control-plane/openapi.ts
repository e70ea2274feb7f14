/** The OpenAPI 3.1 document of the control plane, generated from the zod schemas of the wire. */
import { z } from 'zod';
import {
  connectedSandboxSchema,
  createdSandboxSchema,
  createSandboxRequestSchema,
  sandboxEventSchema,
  inspectionRecordSchema,
  sandboxInfoSchema,
} from '../protocol/control-plane-api.js';
import { errorEnvelopeSchema } from '../protocol/error-envelope.js';

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
          summary: 'List sandboxes',
          security: operator,
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
      '/v1/sandboxes/{sandboxId}/activity': action('An SDK call: resumes with autoResume', sandboxInfoSchema),
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
    },
  };
}
