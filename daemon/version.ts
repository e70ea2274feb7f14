/** The sandboxd version: the package's (DESIGN.md §3), compared by the SDK against SPEC "Versioning". */
export const SANDBOXD_VERSION = '0.10.0';
