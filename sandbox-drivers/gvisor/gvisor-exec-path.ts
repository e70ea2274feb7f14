/** `gvisor-exec` (`gvisor-exec/`) in sandboxd's runtime image, bound at /opt/sdk in sandboxd's root and the box. */
export const GVISOR_EXEC = 'gvisor-exec';

/**
 * The box's `/etc/resolv.conf`, a file of sandboxd's runtime image: the box's own loopback is gVisor's,
 * so its DNS is asked of sandboxd's side of the link (`box-network.ts`), where the sandbox's table
 * sends it to sandboxd's resolver.
 */
export const BOX_RESOLV_CONF = { name: 'box-resolv.conf', text: 'nameserver 169.254.0.1\n' } as const;
