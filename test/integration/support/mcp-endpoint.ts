/**
 * A remote MCP server (streamable HTTP, JSON answers) for tests of `McpRemote` behind a gateway: one tool
 * `lookup` that answers `found: <query>`. It records whether each request carried the expected
 * credential, never the value.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The endpoint and what it saw. */
export interface McpEndpoint {
  readonly handler: (req: IncomingMessage, res: ServerResponse) => void;
  /** JSON-RPC methods received, in order, with whether `authorization` held the expected value. */
  readonly calls: { readonly method: string; readonly credential: 'expected' | 'other' | 'none' }[];
}

/** Creates the endpoint; `expectedAuthorization` is the value the gateway should inject. */
export function createMcpEndpoint(expectedAuthorization: string): McpEndpoint {
  const calls: McpEndpoint['calls'] = [];
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        id?: number | string;
        method: string;
        params?: { protocolVersion?: string; arguments?: { query?: string } };
      };
      const auth = req.headers.authorization;
      calls.push({
        method: message.method,
        credential: auth === undefined ? 'none' : auth === expectedAuthorization ? 'expected' : 'other',
      });
      if (message.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      const result =
        message.method === 'initialize'
          ? {
              protocolVersion: message.params?.protocolVersion ?? '2025-06-18',
              capabilities: { tools: {} },
              serverInfo: { name: 'lookup', version: '1.0.0' },
            }
          : message.method === 'tools/list'
            ? {
                tools: [
                  {
                    name: 'lookup',
                    description: 'Looks a word up',
                    inputSchema: {
                      type: 'object',
                      properties: { query: { type: 'string' } },
                      required: ['query'],
                    },
                  },
                ],
              }
            : message.method === 'tools/call'
              ? { content: [{ type: 'text', text: `found: ${message.params?.arguments?.query ?? ''}` }] }
              : {};
      const body = JSON.stringify({ jsonrpc: '2.0', id: message.id, result });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  };
  return { handler, calls };
}
