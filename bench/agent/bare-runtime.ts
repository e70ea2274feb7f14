/**
 * A runtime started directly on the host, the anchor of the agent benchmark: the template's runtime
 * (runtime_a's opencode binary, or runtime_b's runner on the template's Node) with the command line and
 * environment sandboxd gives it (its `AgentConfigs` and the runtime's driver, from the request the SDK
 * writes, `agentRequestWrite`), but pointed at a
 * scripted model over loopback HTTP, with HOME and the working folder on tmpfs (as the sandbox's
 * `/home/user`), the prompt on stdin, and the process in a memory cgroup of its own so its peak is
 * measured the way the sandbox's is. Optionally its CPU time is limited by a CFS quota, as a sandbox's.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AgentConfigs } from '../../daemon/agent-configs.js';
import type { StartExecution } from '../../protocol/agent-wire.js';
import { runtimeABinary } from '../../runtime-drivers/runtime-a/launch.js';
import { runtimeBFiles } from '../../runtime-drivers/runtime-b/launch.js';
import { agentRequestWrite } from '../../sdk/agent-request.js';
import type { AgentSpec } from '../../sdk/agent-spec.js';
import { PACKAGE_ROOT, type TimedModel } from './timed-model.js';

/** The template's `/opt/agents` on the host (`npm run template:agent`). */
export const BARE_AGENTS_DIR = join(PACKAGE_ROOT, 'templates', 'sdk-agent', 'build', 'opt-agents');
/** runtime_a's binary, and runtime_b's Node and runner, there. */
export const BARE_BINARY = runtimeABinary({ agentsDir: BARE_AGENTS_DIR });
export const BARE_RUNNER = runtimeBFiles({ agentsDir: BARE_AGENTS_DIR });

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
   * Prepares `runtime` (runtime_a by default) for `spec`, its gateway `llm` being `model` (loopback
   * HTTP). `name` names its folder and cgroups; `cpus` limits its CPU time as a sandbox's `cpus` does
   * (no limit by default).
   */
  static async create(
    spec: AgentSpec,
    model: TimedModel,
    name: string,
    options: { readonly runtime?: StartExecution['runtime']; readonly cpus?: number } = {},
  ): Promise<BareRuntime> {
    const { runtime = 'runtime_a', cpus } = options;
    const dir = mkdtempSync(join('/dev/shm', `sdk-bench-agent-${name}-`));
    const home = join(dir, 'home');
    mkdirSync(home);
    // sandboxd's own plan of the run, with the template's folder where the host has it and the route
    // `llm` listening where the scripted model does.
    const configs = new AgentConfigs({
      agentsDir: BARE_AGENTS_DIR,
      listeners: () => ({ llm: `http://127.0.0.1:${new URL(model.origin).port}` }),
      dir: join(dir, 'agent'),
      configHome: join(dir, 'config-home'),
    });
    const stored = await configs.write(agentRequestWrite('bench', runtime, spec, {}));
    const plan = configs.plan(stored, { reasoning: false, workdir: home });
    const missing = plan.files.find((file) => !existsSync(file));
    if (missing !== undefined) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`${missing} is missing: run npm run template:agent`);
    }
    const env = {
      // What every sandbox command gets (daemon/managed-process.ts), then the runtime's own.
      HOME: home,
      USER: 'user',
      LOGNAME: 'user',
      SHELL: '/bin/sh',
      PATH: '/usr/local/bin:/usr/bin:/bin',
      LANG: 'C.UTF-8',
      ...plan.environment,
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
    return new BareRuntime(dir, memory, cgroups, plan.cmd, env);
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
