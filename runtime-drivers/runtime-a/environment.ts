/**
 * Environment for the opencode process that turns off the network attempts the configuration cannot
 * (runtimes.md §1.3, §1.4, §4). The process driver adds `XDG_CONFIG_HOME` (a read-only directory holding
 * `opencode/.gitignore`, which stops the background plugin install) and passes `--title`.
 */
export const RUNTIME_A_ENVIRONMENT: Readonly<Record<string, string>> = {
  OPENCODE_DISABLE_MODELS_FETCH: '1',
  OPENCODE_DISABLE_AUTOUPDATE: '1',
  OPENCODE_DISABLE_SHARE: '1',
  OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
  OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
  OPENCODE_DISABLE_FFF: '1',
  OPENCODE_PURE: '1',
};
