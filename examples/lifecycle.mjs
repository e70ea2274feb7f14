// The main job on the embedded default: bring up a control plane with the namespace driver, then create
// a sandbox, run commands in it, pause and resume it (memory kept), and kill it, printing each step.
// Run as root: `npm run example`.
import { Sandbox } from 'sdk';
import { startEmbeddedControlPlane } from 'sdk/control-plane';

const step = (text) => console.log(`\n== ${text}`);
const show = (result) => process.stdout.write(result.stdout + result.stderr);

const embedded = await startEmbeddedControlPlane();
console.log(`control plane: ${embedded.url}; inspector: ${embedded.inspectorUrl}`);
try {
  step('create a sandbox (closed egress)');
  const started = performance.now();
  const sbx = await Sandbox.create({
    template: 'sdk-base-caps',
    allowInternetAccess: false,
    controlPlaneUrl: embedded.url,
  });
  console.log(`sandbox ${sbx.sandboxId} created in ${(performance.now() - started).toFixed(0)} ms`);

  step('who and where is the code');
  show(await sbx.commands.run('id; hostname; pwd; ls /'));

  step('what it cannot see or reach');
  show(
    await sbx.commands.run(
      "cat /etc/shadow; ls /root; cat /proc/1/environ; node -e \"require('net').connect(443, '10.0.0.1').on('error', e => console.log('egress:', e.code))\"",
    ),
  );

  step('a background counter, and a file in memory (tmpfs)');
  const counter = await sbx.commands.run(
    'i=0; while :; do i=$((i+1)); echo $i > /tmp/count; sleep 0.1; done',
    { background: true },
  );
  show(
    await sbx.commands.run(
      'head -c 1048576 /dev/urandom > /tmp/blob; sha256sum /tmp/blob; sleep 0.5; echo count=$(cat /tmp/count)',
    ),
  );

  step('pause: every process frozen, memory kept');
  await sbx.pause();
  console.log('state:', (await sbx.getInfo()).state);
  await new Promise((resolve) => setTimeout(resolve, 1000));

  step('resume with connect()');
  await sbx.connect();
  console.log('state:', (await sbx.getInfo()).state);
  show(
    await sbx.commands.run(
      'sha256sum /tmp/blob; echo count=$(cat /tmp/count) "(it did not move while paused)"',
    ),
  );

  await counter.kill();
  step('kill');
  await sbx.kill();
  console.log('state:', (await sbx.getInfo()).state);
} finally {
  await embedded.close();
}
