/**
 * A web app for preview-URL tests, run by the sandbox's Node (`node /tmp/app.mjs <port> [host]`, its
 * source written into the sandbox): no package, so it needs nothing but the template.
 *   GET /echo       JSON: the path and query and the headers it received (what sandbox code sees)
 *   GET /sse        server-sent events: `one`, then `two` only once `GET /next` was called (a proxy
 *                   that buffered would hold `one` back, and the test would wait for ever), then ends
 *   GET /next       releases the stream's second event
 *   GET /           a page: a fetch of echo, an iframe of /frame, a WebSocket and an event stream, each
 *                   writing what it got into the page (`#fetch`, `#ws`, `#sse`), for the browser test
 *   GET /frame      a page the iframe shows (`#frame`)
 *   upgrade /ws     a WebSocket that answers each text message with `echo:` and the message
 * Relative URLs only: under a path-based preview the app lives below `/v1/sandboxes/<id>/ports/<port>/`.
 */
export const PREVIEW_APP = String.raw`
import { createServer } from 'node:http';
import { createHash } from 'node:crypto';
const [port, host = '127.0.0.1'] = process.argv.slice(2);
let release = () => undefined;
const page = '<!doctype html><meta charset=utf-8><title>preview</title><p id=fetch>…</p><p id=ws>…</p><p id=sse>…</p>' +
  '<iframe src="frame"></iframe><script src="page.js"></script>';
const script = "fetch('echo').then(r => r.json()).then(j => { document.getElementById('fetch').textContent = 'fetch ' + j.path; });" +
  "const ws = new WebSocket(new URL('ws', location.href).href.replace(/^http/, 'ws'));" +
  "ws.onopen = () => ws.send('hello'); ws.onmessage = (m) => { document.getElementById('ws').textContent = 'ws ' + m.data; };" +
  "const events = new EventSource('sse'); let got = [];" +
  "events.onmessage = (m) => { got.push(m.data); document.getElementById('sse').textContent = 'sse ' + got.join(','); if (got.length === 1) fetch('next'); if (got.length === 2) events.close(); };";
const server = createServer((req, res) => {
  const path = req.url.split('?')[0];
  if (path === '/echo') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ path: req.url, headers: req.headers }));
  } else if (path === '/sse') {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
    res.write('data: one\n\n');
    release = () => res.end('data: two\n\n');
  } else if (path === '/next') {
    release();
    res.end('released');
  } else if (path === '/') {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(page);
  } else if (path === '/page.js') {
    res.writeHead(200, { 'content-type': 'text/javascript' });
    res.end(script);
  } else if (path === '/frame') {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><p id=frame>inside the frame</p>');
  } else {
    res.writeHead(404).end();
  }
});
server.on('upgrade', (req, socket) => {
  const accept = createHash('sha1').update(req.headers['sec-websocket-key'] + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64');
  socket.write('HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: ' + accept + '\r\n\r\n');
  let buffered = Buffer.alloc(0);
  socket.on('data', (chunk) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 6) {
      if ((buffered[0] & 0x0f) === 8) return socket.end(); // close
      const length = buffered[1] & 0x7f; // short text frames only
      if (buffered.length < 6 + length) return;
      const mask = buffered.subarray(2, 6);
      const text = Buffer.from(buffered.subarray(6, 6 + length).map((b, i) => b ^ mask[i % 4])).toString();
      buffered = buffered.subarray(6 + length);
      const reply = Buffer.from('echo:' + text);
      socket.write(Buffer.concat([Buffer.from([0x81, reply.length]), reply]));
    }
  });
});
server.listen(Number(port), host, () => console.log('listening'));
`;
