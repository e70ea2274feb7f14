/**
 * runtime_a started directly on the host, the anchor of the agent benchmark: the template's opencode
 * binary with the command line, environment and configuration sandboxd gives it (`runtimeACommand`,
 * `runtimeAEnvironment`, the SDK's `runtimeAConfigWrite` → `buildRuntimeAConfig`), but pointed at a
 * scripted model over loopback HTTP, with HOME and the working folder on tmpfs (as the sandbox's
 * `/home/user`), the prompt on stdin, and the process in a memory cgroup of its own so its peak is
 * measured the way the sandbox's is. Optionally its CPU time is limited by a CFS quota, as a sandbox's.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AgentConfigs } from '../../daemon/agent-configs.js';
import { runtimeACommand, runtimeAEnvironment } from '../../daemon/runtime-a-launch.js';
import type { StartExecution } from '../../protocol/agent-wire.js';
import { runtimeAConfigWrite } from '../../sdk/agent-config.js';
import type { AgentSpec } from '../../sdk/agent-spec.js';
import type { SandboxGateways } from '../../sdk/sandbox-gateways.js';
import { PACKAGE_ROOT, type TimedModel } from './timed-model.js';

/** The template's runtime on the host (`npm run template:agent`). */
export const BARE_BIN_DIR = join(PACKAGE_ROOT, 'templates', 'sdk-agent', 'build', 'opt-agents', 'bin');
export const BARE_BINARY = join(BARE_BIN_DIR, 'opencode');

const MEMORY_ROOT = '/sys/fs/cgroup/memory';
const CPU_ROOT = '/sys/fs/cgroup/cpu';
const CPU_PERIOD_US = 100_000;

/** One bare run, times in ms from the spawn. */
export interface BareRun {
  readonly firstRequestMs: number;
  readonly exitMs: number;
  /** `memory.max_usage_in_bytes` of the run's cgroup. */
  readonly peakBytes: number;
}

/** The bare runtime: its folders, configuration and cgroups, reused run after run. */
export class BareRuntime {
  readonly #dir: string;
  readonly #memory: string;
  /** Every cgroup it joins: the memory one, and the CPU one when its CPU time is limited. */
  readonly #cgroups: readonly string[];
  readonly #command: string;
  readonly #env: Readonly<Record<string, string>>;

  private constructor(
    dir: string,
    memory: string,
    cgroups: string[],
    command: string,
    env: Record<string, string>,
  ) {
    this.#dir = dir;
    this.#memory = memory;
    this.#cgroups = cgroups;
    this.#command = command;
    this.#env = env;
  }

  /**
   * Prepares the runtime for `spec`, its gateway `llm` being `model` (loopback HTTP). `name` names its
   * folder and cgroups; `cpus` limits its CPU time as a sandbox's `cpus` does (no limit by default).
   */
  static create(spec: AgentSpec, model: TimedModel, name: string, cpus?: number): BareRuntime {
    const port = Number(new URL(model.origin).port);
    // The configuration the SDK writes for a sandbox whose route `llm` listens on `port`.
    const gateways = { get: (gateway: string) => (gateway === 'llm' ? { port } : undefined) };
    const config = runtimeAConfigWrite('bench', spec, gateways as unknown as SandboxGateways);
    const dir = mkdtempSync(join('/dev/shm', `sdk-bench-agent-${name}-`));
    const home = join(dir, 'home');
    mkdirSync(home);
    const configs = new AgentConfigs(join(dir, 'agent'), join(dir, 'config-home'));
    const stored = configs.write(config);
    const start: StartExecution = {
      runtime: 'runtime_a',
      configHash: config.hash,
      limits: { timeoutMs: 600_000, maxSteps: 100, maxTotalTokens: null, maxOutputBytes: 16 << 20 },
      workdir: home,
      reasoning: false,
    };
    const env = {
      // What every sandbox command gets (daemon/managed-process.ts), then the runtime's own.
      HOME: home,
      USER: 'user',
      LOGNAME: 'user',
      SHELL: '/bin/sh',
      LANG: 'C.UTF-8',
      ...runtimeAEnvironment(stored, configs.configHomeDir),
      PATH: `${BARE_BIN_DIR}:/usr/local/bin:/usr/bin:/bin`,
    };
    const cgroupName = `sdk-bench-agent-${String(process.pid)}-${name}`;
    const memory = join(MEMORY_ROOT, cgroupName);
    const cgroups = [memory];
    try {
      mkdirSync(memory);
      if (cpus !== undefined) {
        const cpu = join(CPU_ROOT, cgroupName);
        mkdirSync(cpu);
        cgroups.push(cpu);
        writeFileSync(join(cpu, 'cpu.cfs_period_us'), String(CPU_PERIOD_US));
        writeFileSync(join(cpu, 'cpu.cfs_quota_us'), String(Math.round(cpus * CPU_PERIOD_US)));
      }
    } catch (error) {
      for (const cgroup of cgroups) if (existsSync(cgroup)) rmdirSync(cgroup);
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
    return new BareRuntime(dir, memory, cgroups, runtimeACommand(start, BARE_BINARY), env);
  }

  /** Runs `prompt` once; the model's script must be set by the caller. */
  async run(prompt: string, model: TimedModel): Promise<BareRun> {
    writeFileSync(join(this.#memory, 'memory.max_usage_in_bytes'), '0');
    // The shell joins the cgroups, then becomes the runtime (`exec`), as sandboxd's command runner does.
    const joins = this.#cgroups.map((_, i) => `echo $$ > "$${String(i + 1)}"`).join(' && ');
    const procs = this.#cgroups.map((cgroup) => join(cgroup, 'cgroup.procs'));
    const spawned = performance.now();
    const child = spawn('/bin/sh', ['-c', `${joins} && ${this.#command}`, 'sh', ...procs], {
      cwd: this.#env['HOME'],
      env: this.#env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdout.resume();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-2000)));
    child.stdin.end(prompt);
    const [exitCode] = (await once(child, 'exit')) as [number | null];
    const exitMs = performance.now() - spawned;
    if (exitCode !== 0) throw new Error(`the bare runtime exited with ${String(exitCode)}: ${stderr}`);
    const firstRequestMs = model.firstRequestAfter(spawned);
    if (firstRequestMs === undefined) throw new Error('the bare runtime made no model request');
    const peakBytes = Number(readFileSync(join(this.#memory, 'memory.max_usage_in_bytes'), 'utf8'));
    return { firstRequestMs, exitMs, peakBytes };
  }

  /** Removes the cgroups (killing what the runs left in them) and the folder. */
  async close(): Promise<void> {
    for (const cgroup of this.#cgroups) {
      for (let attempt = 0; attempt < 50 && existsSync(cgroup); attempt++) {
        for (const pid of readFileSync(join(cgroup, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
          try {
            process.kill(Number(pid), 'SIGKILL');
          } catch {
            // gone already
          }
        }
        try {
          rmdirSync(cgroup);
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 100)); // until the killed ones are reaped
        }
      }
    }
    rmSync(this.#dir, { recursive: true, force: true });
  }
}
