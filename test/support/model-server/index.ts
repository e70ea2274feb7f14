/** Scripted model server for agent tests: see `server.ts`. */
export { createModelServer, startModelServer, wireOf } from './server.js';
export type { ListeningModelServer, ModelHandler, ModelServer, ModelServerOptions } from './server.js';
export { DEFAULT_USAGE, errorStatus, text, toolCall } from './script.js';
export type {
  ErrorTurn,
  RecordedRequest,
  ScriptEntry,
  TextTurn,
  ToolCallTurn,
  Turn,
  Usage,
  WireStyle,
} from './script.js';
export { parseSse, type ParsedEvent } from './sse-reader.js';
export { dataOf, postJson, readEvents } from './client.js';
