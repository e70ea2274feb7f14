/** Scripted model server for agent tests: see `server.ts`. */
export { createModelServer, startModelServer, wireOf } from './server.js';
export type { ListeningModelServer, ModelHandler, ModelServer, ModelServerOptions } from './server.js';
export {
  chatToolNames,
  DEFAULT_USAGE,
  errorStatus,
  text,
  TOOL_THEN_TEXT_EVENTS,
  toolCall,
} from './script.js';
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
export { eventsOf, parseEventStream } from './event-stream-reader.js';
export type { EventStreamMessage, StreamEvent } from './event-stream-reader.js';
export { converseModelId, converseRequest } from './converse-stream.js';
export type { ConverseBlock, ConverseMessage, ConverseRequest, InferenceConfig } from './converse-stream.js';
export { dataOf, postJson, readEventStream, readEvents } from './client.js';
