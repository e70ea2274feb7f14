/* global fetch -- Node 24, the sandbox's, has it; the lint config knows Node 20's globals */
// The benchmark's client, run by the sandbox's Node 24 (fetch with keep-alive; through the broker when
// the environment's HTTPS_PROXY applies, which NO_PROXY='*' turns off). One JSON line on stdout.
//   node client.mjs latency <count> <spacing ms> <url> [authorization]   one at a time, paced
//   node client.mjs throughput <seconds> <concurrency> <url> [authorization]   response bytes per second
//   node client.mjs sse <url> [authorization]
const [mode, ...args] = process.argv.slice(2);

const headersOf = (authorization) => (authorization ? { authorization } : {});

async function get(url, authorization) {
  const response = await fetch(url, { headers: headersOf(authorization) });
  const body = await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`${url}: ${response.status}`);
  return body.byteLength;
}

if (mode === 'latency') {
  const [count, spacing, url, authorization] = args;
  for (let i = 0; i < 20; i++) await get(url, authorization); // warm: connections and TLS sessions
  const samples = [];
  const origin = performance.now();
  for (let i = 0; i < Number(count); i++) {
    // Paced below a route's rate limit (SPEC: at most 6000 a minute), each on its own slot.
    const slot = origin + i * Number(spacing);
    if (performance.now() < slot)
      await new Promise((resolve) => setTimeout(resolve, slot - performance.now()));
    const started = performance.now();
    await get(url, authorization);
    samples.push(performance.now() - started);
  }
  console.log(JSON.stringify({ samples }));
} else if (mode === 'throughput') {
  const [seconds, concurrency, url, authorization] = args;
  for (let i = 0; i < Number(concurrency); i++) await get(url, authorization);
  const deadline = performance.now() + Number(seconds) * 1000;
  let bytes = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: Number(concurrency) }, async () => {
      while (performance.now() < deadline) bytes += await get(url, authorization);
    }),
  );
  console.log(JSON.stringify({ bytes, seconds: (performance.now() - started) / 1000 }));
} else if (mode === 'sse') {
  const [url, authorization] = args;
  const started = performance.now();
  const response = await fetch(url, { headers: headersOf(authorization) });
  let firstByteMs;
  const lateness = [];
  let text = '';
  for await (const chunk of response.body) {
    firstByteMs ??= performance.now() - started;
    text += Buffer.from(chunk).toString();
    let end;
    while ((end = text.indexOf('\n\n')) >= 0) {
      const event = text.slice(0, end);
      text = text.slice(end + 2);
      if (event.startsWith('data: '))
        lateness.push(performance.timeOrigin + performance.now() - Number(event.slice(6)));
    }
  }
  console.log(JSON.stringify({ firstByteMs, lateness }));
} else {
  throw new Error(`unknown mode ${mode}`);
}
