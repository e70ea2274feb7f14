/**
 * The template build on the wire (issue 14, SPEC "Image tooling"): `POST /v1/templates` takes an agent
 * template's options and answers with NDJSON, a line per build step and a last line saying how the
 * build ended. The SDK's `AgentTemplate` and the CLI (`sdk template build`) send it; the control plane
 * hands it to its driver.
 */
import { z } from 'zod';
import { errorEnvelopeSchema } from './error-envelope.js';

/** A name a template build may take: 1-63 characters `[a-z0-9-]`, starting with a letter or digit. */
export const BUILT_TEMPLATE_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** The templates the driver makes itself, which a build can stand on and never replaces. */
export const BUILD_BASES = ['sdk-base-caps', 'sdk-base'] as const;

/** An agent template's options (SPEC "Image tooling"), defaults filled. */
export const agentTemplateSpecSchema = z.strictObject({
  name: z
    .string()
    .regex(BUILT_TEMPLATE_NAME, 'must be 1-63 characters [a-z0-9-]')
    .refine((name) => !(BUILD_BASES as readonly string[]).includes(name), 'must not name a base template')
    .default('sdk-agent'),
  base: z.enum(BUILD_BASES).default('sdk-base-caps'),
  /** Memory of sandbox code by default in sandboxes of this template, MiB (1024 when absent). */
  memoryMb: z.number().int().min(256).max(16_384).optional(),
  /** runtime_b (deep agents on Node 24) under /opt/agents beside runtime_a. */
  runtimeB: z.boolean().default(true),
  /** The runtime binaries read into the page cache whenever a sandbox of it starts or resumes. */
  prefetch: z.boolean().default(true),
  /** Not on this engine: sandboxes share the host's kernel, there is none of their own to warm. */
  kernelWarmup: z
    .literal(false, 'must be false: the namespace engine has no kernel of its own')
    .default(false),
});

/** An agent template's options as given. */
export type AgentTemplateOptions = z.input<typeof agentTemplateSpecSchema>;

/** An agent template's options, defaults filled. */
export type AgentTemplateSpec = z.output<typeof agentTemplateSpecSchema>;

/** Longest a build may run, ms (3 hours), and its default (30 minutes). */
export const BUILD_TIMEOUT_MS = { max: 3 * 60 * 60_000, default: 30 * 60_000 } as const;

/** Body of `POST /v1/templates`. */
export const buildTemplateRequestSchema = z.strictObject({
  template: agentTemplateSpecSchema,
  /** Build it again even when a template of this name exists, its own layers not taken from the cache. */
  force: z.boolean().default(false),
  timeoutMs: z.number().int().min(1000).max(BUILD_TIMEOUT_MS.max).default(BUILD_TIMEOUT_MS.default),
});

/** A build request as sent. */
export type BuildTemplateRequest = z.input<typeof buildTemplateRequestSchema>;

/** What a built template is, as the build's last line and `AgentTemplate.build()` report it. */
export const builtTemplateSchema = z.strictObject({
  name: z.string(),
  base: z.string(),
  sandboxdVersion: z.string(),
  /** The hash of the image's inputs (recipe, runtime options). */
  recipeHash: z.string(),
  memoryMb: z.number(),
  runtimeB: z.boolean(),
  prefetch: z.boolean(),
  kernelWarmup: z.boolean(),
  /** False when a template of these options was already built and nothing was done. */
  built: z.boolean(),
});

/** A built template's facts. */
export type BuiltTemplate = z.infer<typeof builtTemplateSchema>;

/** One line of the build's answer. */
export const templateBuildLineSchema = z.discriminatedUnion('type', [
  /** A step began (`cached`: its layer was already built); `index` of `total`, from 1. */
  z.strictObject({
    type: z.literal('step'),
    step: z.string(),
    cached: z.boolean(),
    index: z.number().int().min(1),
    total: z.number().int().min(1),
  }),
  z.strictObject({ type: z.literal('built'), template: builtTemplateSchema }),
  /** The build failed at `step`; nothing of it is left. */
  z.strictObject({ type: z.literal('failed'), step: z.string(), error: errorEnvelopeSchema }),
]);

/** One line of the build's answer. */
export type TemplateBuildLine = z.infer<typeof templateBuildLineSchema>;
