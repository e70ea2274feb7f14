/**
 * How sandboxd's Node runs: the V8 flags that bound its memory under a flood of output (daemon/README.md,
 * "Bounds"). A command's kept output moves through sandboxd's heap as fast as the command writes; with
 * V8's defaults the young generation grows to 3 × 16 MiB and the old one to 4× what was live after the
 * last full collection, leaving up to ~100 MiB of dead output resident, and sandboxd's memory comes out
 * of the sandbox's. The namespace driver passes them on sandboxd's command line and to the warm-up run
 * that writes its code cache (V8 refuses a cache written under other flags); the daemon's tests start
 * it with them too.
 */
export const SANDBOXD_NODE_FLAGS: readonly string[] = [
  '--max-semi-space-size=1',
  '--heap-growing-percent=20',
  // Frees Buffers passed on before V8's external-memory limit would (daemon/buffer-collection.ts).
  '--expose-gc',
];

/**
 * sandboxd's stated bound on its resident memory (daemon/README.md, "Bounds"): what no command, client
 * or sandbox code may grow it past. The namespace driver gives sandboxd this much memory above the
 * sandbox's own.
 */
export const SANDBOXD_MEMORY_BOUND = 128 * 2 ** 20;
