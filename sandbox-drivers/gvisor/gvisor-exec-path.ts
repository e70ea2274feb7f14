/** `gvisor-exec` (`gvisor-exec/`) in sandboxd's runtime image, bound at /opt/sdk in sandboxd's root and the box. */
export const GVISOR_EXEC = 'gvisor-exec';
