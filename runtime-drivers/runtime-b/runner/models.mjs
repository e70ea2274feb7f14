/**
 * The chat model of each AgentModel provider, reaching its gateway route on the sandbox's loopback.
 *
 * `baseURL` is the gateway listener's URL plus the provider's base path (the same base paths as
 * runtime_a): vendor_a `''`, vendor_b `/v1`, vendor_c `/v1`, vendor_d `/v1beta`, vendor_e
 * `/vendor_c/v1`, compatible the preset's base path. No credential reaches the runner: each package
 * that insists on a key gets the placeholder `sdk-placeholder`, which the gateway drops from every
 * header that carries it before injecting the real key.
 *
 * | provider   | package                                   | request                                          | placeholder header(s)                   |
 * | ---------- | ----------------------------------------- | ------------------------------------------------ | --------------------------------------- |
 * | vendor_a   | @langchain/aws ChatBedrockConverse        | POST <baseURL>/model/<id>/converse-stream        | authorization: Bearer (httpBearerAuth)  |
 * | vendor_b   | @langchain/anthropic ChatAnthropic        | POST <baseURL without /v1>/v1/messages           | x-api-key                               |
 * | vendor_c   | @langchain/openai ChatOpenAI (responses)  | POST <baseURL>/responses                         | authorization: Bearer                   |
 * | vendor_d   | @langchain/google-genai                   | POST <origin>/v1beta/models/<id>:streamGenerateContent?alt=sse | x-goog-api-key            |
 * | vendor_e   | @langchain/openai ChatOpenAI (responses)  | POST <baseURL>/responses                         | api-key and authorization: Bearer       |
 * | compatible | @langchain/openai ChatOpenAICompletions   | POST <baseURL>/chat/completions (include_usage)  | authorization: Bearer                   |
 *
 * Each package is imported only when its provider is used (the AWS SDK alone takes ~100 ms to load).
 */

/** The non-secret key given to packages that refuse to start without one (`rules/placeholder-key.ts`). */
export const PLACEHOLDER_KEY = 'sdk-placeholder';

/** Retries of a failed model request inside the client (a 5xx or a dropped connection). */
export const MAX_RETRIES = 2;

export const PROVIDERS = ['vendor_a', 'vendor_b', 'vendor_c', 'vendor_d', 'vendor_e', 'compatible'];

const trimSlash = (url) => url.replace(/\/+$/, '');

/** vendor_d's client takes the origin and the API version apart: `/v1beta` (or `/v1`) splits off. */
function splitApiVersion(baseURL) {
  const match = /^(.*?)\/(v1beta|v1alpha|v1)$/.exec(trimSlash(baseURL));
  return match === null
    ? { origin: trimSlash(baseURL), apiVersion: 'v1beta' }
    : { origin: match[1], apiVersion: match[2] };
}

/**
 * The chat model for `model` (`{ provider, id, baseURL, region? }`).
 *
 * @param {{ provider: string, id: string, baseURL: string, region?: string }} model
 */
export async function createChatModel(model) {
  const baseURL = trimSlash(model.baseURL);
  switch (model.provider) {
    case 'compatible': {
      // Chat completions whatever the model id (ChatOpenAI would switch some ids to responses), with
      // `stream_options.include_usage` so usage arrives in streaming.
      const { ChatOpenAICompletions } = await import('@langchain/openai');
      return new ChatOpenAICompletions({
        model: model.id,
        apiKey: PLACEHOLDER_KEY,
        configuration: { baseURL },
        maxRetries: MAX_RETRIES,
        streamUsage: true,
      });
    }
    case 'vendor_c':
    case 'vendor_e': {
      const { ChatOpenAI } = await import('@langchain/openai');
      return new ChatOpenAI({
        model: model.id,
        apiKey: PLACEHOLDER_KEY,
        useResponsesApi: true,
        configuration: {
          baseURL,
          // vendor_e's key header; the gateway injects the real one (the placeholder is dropped).
          ...(model.provider === 'vendor_e' ? { defaultHeaders: { 'api-key': PLACEHOLDER_KEY } } : {}),
        },
        maxRetries: MAX_RETRIES,
        streamUsage: true,
      });
    }
    case 'vendor_b': {
      const { ChatAnthropic } = await import('@langchain/anthropic');
      // The client appends `/v1/messages` itself.
      return new ChatAnthropic({
        model: model.id,
        apiKey: PLACEHOLDER_KEY,
        anthropicApiUrl: baseURL.replace(/\/v1$/, ''),
        maxRetries: MAX_RETRIES,
        streaming: true,
      });
    }
    case 'vendor_d': {
      const { ChatGoogleGenerativeAI } = await import('@langchain/google-genai');
      const { origin, apiVersion } = splitApiVersion(baseURL);
      return new ChatGoogleGenerativeAI({
        model: model.id,
        apiKey: PLACEHOLDER_KEY,
        baseUrl: origin,
        apiVersion,
        maxRetries: MAX_RETRIES,
        streaming: true,
      });
    }
    case 'vendor_a': {
      const [{ ChatBedrockConverse }, { BedrockRuntimeClient }, { NodeHttpHandler }] = await Promise.all([
        import('@langchain/aws'),
        import('@aws-sdk/client-bedrock-runtime'),
        import('@smithy/node-http-handler'),
      ]);
      const region = model.region ?? 'us-east-1';
      // Our own client: `endpointHost` would force https, and the default handler speaks HTTP/2, which
      // the loopback listener does not. A bearer token (the placeholder) instead of SigV4 credentials.
      const client = new BedrockRuntimeClient({
        region,
        endpoint: baseURL,
        requestHandler: new NodeHttpHandler(),
        authSchemePreference: ['httpBearerAuth'],
        token: async () => ({ token: PLACEHOLDER_KEY }),
        maxAttempts: MAX_RETRIES + 1,
      });
      return new ChatBedrockConverse({
        model: model.id,
        region,
        client,
        // Also keeps the package from building a default AWS credential chain it would not use.
        bedrockBearerToken: PLACEHOLDER_KEY,
        streaming: true,
      });
    }
    default:
      throw new Error(`unknown provider ${String(model.provider)}`);
  }
}
