/**
 * Credentials people type into command lines, masked before sandboxd records a line (its event stream,
 * which the records API and the inspector show). A line is read as the shell reads it — words, quotes,
 * escapes, commands between `;`, `&`, `|`, parentheses, backquotes and newlines, nested command lines
 * (`sh -c '…'`, `eval`, `ssh host '…'`, `$(…)`) — and each word also as the data it often holds: a
 * header, JSON, a URL. A masked value keeps its name and its outer quotes and becomes `***`. Where a
 * value's end cannot be told it runs to the end of its word: this masks more, never less.
 */

/** What a masked value becomes. */
const MASK = '***';

/**
 * A word as the shell reads it: its text without quotes and escapes, and for each of its characters the
 * part of the line it came from (an escaped character from its backslash on).
 */
interface Word {
  readonly text: string;
  readonly starts: readonly number[];
  readonly ends: readonly number[];
}

/** A part of the line, `[start, end)`. */
type Span = readonly [start: number, end: number];

/** A pattern of a word's text and the part of the text a match shows as a credential, if any. */
type TextRule = (text: string) => Iterable<readonly [start: number, end: number]>;

/** A rule over a command's words (a flag and the word after it, a program's option). */
type CommandRule = (words: readonly Word[]) => Iterable<Span>;

/**
 * Names that say credential: token, secret, password (pass, passwd, pwd, passphrase), credential, auth
 * and authorization, cookie, signature, and key as a word of its own or after api, access, private….
 * Also matched inside longer names (`X_API_KEY`, `--access-token`, `aws_secret_access_key`), so some
 * harmless names (`BYPASS`) are masked too.
 */
const CREDENTIAL_NAME = new RegExp(
  [
    'token(?!iz)', // not TOKENIZERS_PARALLELISM
    'secret',
    'passw(?:or)?d',
    'passphrase',
    'pass(?:in|out|s)?(?![a-z])',
    '(?<![a-z])pwd(?![a-z])',
    'credential',
    'auth(?:orization)?(?![a-z])', // not author
    'bearer',
    'cookie',
    'signature',
    '(?<![a-z])sig(?![a-z])',
    '(?<![a-z])keys?(?![a-z])', // not monkey, keyboard
    '(?:api|access|private|secret|signing|master|session|encryption|license|client|account|app)[_-]?keys?',
  ].join('|'),
  'i',
);

/** Whether `name` (a variable, flag, header or JSON key) names a credential. */
export function isCredentialName(name: string): boolean {
  return CREDENTIAL_NAME.test(name);
}

/** Schemes of an `Authorization` value, kept before the masked part. */
const AUTH_SCHEME = /^(?:bearer|basic|token|digest|negotiate|ntlm)$/i;

/**
 * Masks what looks like a credential in a command line: a URL's user and password, bearer tokens,
 * private keys, values named by a credential name (`NAME=value`, `--name value`, `--name=value`,
 * `Name: value` headers, `"name": "value"` JSON, `set name value`), SQL `PASSWORD '…'`, and the password
 * options of mysql (`-pPASS`), curl (`-u user:PASS`, `-b COOKIE`), sshpass, redis-cli and `… login -p`.
 *
 * @example
 * maskCredentials(`export X_API_KEY="sk-123" && curl -u me:hunter2 https://x`);
 * // 'export X_API_KEY="***" && curl -u *** https://x'
 */
export function maskCredentials(line: string): string {
  const whole = lineWord(line);
  const spans = [...textSpans(whole, LINE_RULES), ...commandSpans(readCommands(whole), 0)];
  return masked(line, spans);
}

/** The line as one word, each character from itself. */
function lineWord(line: string): Word {
  const starts = Array.from({ length: line.length }, (_, i) => i);
  return { text: line, starts, ends: starts.map((i) => i + 1) };
}

/** Characters that end a command (and the word before them). */
const OPERATORS = new Set([';', '&', '|', '(', ')', '`', '\n']);

/** What a backslash escapes inside double quotes; before any other character it stays. */
const DOUBLE_QUOTED_ESCAPES = new Set(['$', '`', '"', '\\', '\n']);

/** A word being read. */
interface WordDraft {
  text: string;
  readonly starts: number[];
  readonly ends: number[];
}

/**
 * Splits `source`'s text into commands and words as the shell does, keeping for each character of a
 * word where it came from in the line. Unclosed quotes run to the end.
 */
class CommandReader {
  readonly #source: Word;
  readonly #text: string;
  readonly #commands: Word[][] = [[]];
  #draft: WordDraft | undefined;

  constructor(source: Word) {
    this.#source = source;
    this.#text = source.text;
  }

  /** The commands of the source, each with at least one word. */
  read(): Word[][] {
    let i = 0;
    while (i < this.#text.length) i = this.#step(i);
    this.#endWord();
    return this.#commands.filter((words) => words.length > 0);
  }

  /** Reads what starts at `i`; the index after it. */
  #step(i: number): number {
    const char = this.#text.charAt(i);
    if (char === "'") return this.#singleQuoted(i, this.#text.charAt(i - 1) === '$');
    if (char === '"') return this.#doubleQuoted(i);
    if (char === '\\') return this.#escaped(i);
    if (OPERATORS.has(char)) {
      this.#endWord();
      this.#commands.push([]);
    } else if (/\s/.test(char)) this.#endWord();
    else this.#take(i, i);
    return i + 1;
  }

  #escaped(i: number): number {
    if (i + 1 >= this.#text.length) this.#take(i, i);
    else if (this.#text.charAt(i + 1) !== '\n') this.#take(i, i + 1); // a newline escaped joins lines
    return i + 2;
  }

  /** `'…'`, or `$'…'` where a backslash escapes. */
  #singleQuoted(open: number, ansi: boolean): number {
    this.#draft ??= { text: '', starts: [], ends: [] };
    let i = open + 1;
    while (i < this.#text.length && this.#text.charAt(i) !== "'") {
      const escape = ansi && this.#text.charAt(i) === '\\' && i + 1 < this.#text.length;
      this.#take(i, escape ? i + 1 : i);
      i += escape ? 2 : 1;
    }
    return i + 1;
  }

  #doubleQuoted(open: number): number {
    this.#draft ??= { text: '', starts: [], ends: [] };
    let i = open + 1;
    while (i < this.#text.length && this.#text.charAt(i) !== '"') {
      const next = this.#text.charAt(i + 1);
      const escape = this.#text.charAt(i) === '\\' && DOUBLE_QUOTED_ESCAPES.has(next);
      if (!escape) this.#take(i, i);
      else if (next !== '\n') this.#take(i, i + 1);
      i += escape ? 2 : 1;
    }
    return i + 1;
  }

  /** Adds the character at `last`, from `first` on in the source, to the word being read. */
  #take(first: number, last: number): void {
    this.#draft ??= { text: '', starts: [], ends: [] };
    this.#draft.text += this.#text.charAt(last);
    this.#draft.starts.push(this.#source.starts[first] ?? 0);
    this.#draft.ends.push(this.#source.ends[last] ?? 0);
  }

  #endWord(): void {
    if (this.#draft !== undefined) this.#commands.at(-1)?.push(this.#draft);
    this.#draft = undefined;
  }
}

/** The commands of `source` (a line or a word holding a command line). */
function readCommands(source: Word): Word[][] {
  return new CommandReader(source).read();
}

/** How deep command lines inside words are read (`sh -c "ssh h 'eval …'"` is three). */
const MAX_DEPTH = 3;

/** Programs whose `-c` argument is a shell command line. */
const SHELLS = /^(?:sh|bash|zsh|dash|ksh|mksh|ash|fish|busybox|su|runuser)$/;

/**
 * Whether each word of a command runs as a command line: `shell` when it surely does (a shell's `-c`
 * argument, `eval`'s, ssh's), `maybe` when it may (it holds `$(…)` or a backquote, or is another
 * program's `-c` argument).
 */
function commandLines(words: readonly Word[]): ('shell' | 'maybe' | undefined)[] {
  let ssh = false;
  let shell = false;
  return words.map((word, i) => {
    const before = words[i - 1];
    if (before !== undefined) {
      ssh ||= programName(before) === 'ssh';
      shell ||= SHELLS.test(programName(before));
    }
    if (before?.text === 'eval' || (ssh && /\s/.test(word.text))) return 'shell';
    if (/^-[A-Za-z]*c$/.test(before?.text ?? '')) return shell ? 'shell' : 'maybe';
    return word.text.includes('$(') || word.text.includes('`') ? 'maybe' : undefined;
  });
}

/** A word's last path segment (`/usr/bin/mysql` is `mysql`). */
function programName(word: Word): string {
  return word.text.slice(word.text.lastIndexOf('/') + 1);
}

/**
 * Every span of each command's words and of the command lines inside them. A word read as a shell
 * command line is not also read as one value to its end (the commands inside it say where values end).
 */
function commandSpans(commands: readonly Word[][], depth: number): Span[] {
  const spans: Span[] = [];
  for (const words of commands) {
    for (const rule of COMMAND_RULES) spans.push(...rule(words));
    const lines = depth < MAX_DEPTH ? commandLines(words) : [];
    words.forEach((word, i) => {
      const inside = lines[i];
      spans.push(...textSpans(word, inside === 'shell' ? DATA_RULES : WORD_RULES));
      if (inside !== undefined) spans.push(...commandSpans(readCommands(word), depth + 1));
    });
  }
  return spans;
}

/** The spans of the line that `rules` find in `word`'s text. */
function textSpans(word: Word, rules: readonly TextRule[]): Span[] {
  return rules.flatMap((rule) => [...rule(word.text)].flatMap(([start, end]) => part(word, start, end)));
}

/** The span of the line that `word.text.slice(start, end)` came from (none when empty). */
function part(word: Word, start = 0, end = word.text.length): Span[] {
  const from = word.starts[start];
  const to = word.ends[end - 1];
  return end > start && from !== undefined && to !== undefined ? [[from, to]] : [];
}

/** `line` with `spans` (merged where they overlap or touch) replaced by `MASK`. */
function masked(line: string, spans: readonly Span[]): string {
  const sorted = [...spans].sort((a, b) => a[0] - b[0]);
  let out = '';
  let end = -1; // where the spans masked so far end (none yet)
  for (const [start, stop] of sorted) {
    if (start > end) out += line.slice(Math.max(end, 0), start) + MASK;
    end = Math.max(end, stop);
  }
  return out + line.slice(Math.max(end, 0));
}

/** Where the last group of each match of `pattern` (flags `dg`) is in `text`. */
function* lastGroups(pattern: RegExp, text: string): Generator<readonly [number, number]> {
  for (const match of text.matchAll(pattern)) {
    const group = match.indices?.at(-1);
    if (group !== undefined) yield group;
  }
}

/** `user:password@` of a URL (all of it: a user can be a token, as in `https://TOKEN@host`). */
const urlUserinfo: TextRule = (text) => lastGroups(/\b[a-z][a-z0-9+.-]*:\/\/([^\s/?#]+)@/dgi, text);

/** A bearer token in a word (`Bearer eyJ…`). */
const bearerToken: TextRule = (text) => lastGroups(/\bbearer\s+(\S{8,})/dgi, text);

/** A bearer token in the line as written, where a quote ends it. */
const writtenBearerToken: TextRule = (text) => lastGroups(/\bbearer\s+([^\s'"]{8,})/dgi, text);

/** The body of a PEM private key. */
const privateKey: TextRule = (text) =>
  lastGroups(
    /-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----\s*([\s\S]*?)\s*(?=-----END \1PRIVATE KEY-----|$)/dg,
    text,
  );

/** SQL's `PASSWORD '…'` and `IDENTIFIED BY '…'`. */
function* sqlPassword(text: string): Generator<readonly [number, number]> {
  for (const match of text.matchAll(/\b(?:password|identified\s+by)\s+(?=['"])/gi)) {
    yield quotedValue(text, match.index + match[0].length);
  }
}

/** `"name": value`, `'name' => value`, `['name'] = value` (JSON, dicts, hashes) with a credential name. */
function* quotedKeyValue(text: string): Generator<readonly [number, number]> {
  for (const match of text.matchAll(/(["'])([^"'\\\n]{1,100})\1[ \t]*\]?[ \t]*(?::|=>|=)[ \t]*/g)) {
    if (isCredentialName(match[2] ?? '')) yield quotedValue(text, match.index + match[0].length);
  }
}

/**
 * The value at `start`: inside its quotes when quoted (a backslash escapes, unclosed runs to the end),
 * else up to a blank, `,`, `}` or `]`.
 */
function quotedValue(text: string, start: number): readonly [number, number] {
  const quote = text.charAt(start);
  if (quote !== '"' && quote !== "'") {
    const end = text.slice(start).search(/[\s,}\]]/);
    return [start, end < 0 ? text.length : start + end];
  }
  let i = start + 1;
  // A backslash escapes; a doubled quote is one quote in SQL (and two strings joined in Python).
  while (i < text.length && (text.charAt(i) !== quote || text.charAt(i + 1) === quote)) {
    i += text.charAt(i) === '\\' || text.charAt(i) === quote ? 2 : 1;
  }
  return [start + 1, Math.min(i, text.length)];
}

/** `NAME=value` (also `--name=value`, `a.b.name = value`): the rest of the word. */
function* assignedValue(text: string): Generator<readonly [number, number]> {
  for (const match of text.matchAll(/(?<![\w.-])([\w.-]+)[ \t]*=[ \t]*/g)) {
    if (isCredentialName(match[1] ?? '')) yield [match.index + match[0].length, text.length];
  }
}

/** `Name: value` (headers, YAML): the rest of the word after the scheme, if any. */
function* headerValue(text: string): Generator<readonly [number, number]> {
  for (const match of text.matchAll(/(?<![\w.-])([\w.-]+):[ \t]*/g)) {
    if (!isCredentialName(match[1] ?? '')) continue;
    const start = match.index + match[0].length;
    const scheme = /^(\S+)[ \t]+/.exec(text.slice(start));
    const skip = scheme !== null && AUTH_SCHEME.test(scheme[1] ?? '') ? scheme[0].length : 0;
    if (start + skip < text.length) yield [start + skip, text.length];
  }
}

/** Rules over the whole line as written: what quotes cannot hide or a heredoc's lines hold. */
const LINE_RULES: readonly TextRule[] = [
  privateKey,
  urlUserinfo,
  writtenBearerToken,
  quotedKeyValue,
  sqlPassword,
];

/** Rules that find where a value ends whatever the word holds. */
const DATA_RULES: readonly TextRule[] = [urlUserinfo, bearerToken, quotedKeyValue, sqlPassword];

/** Rules over each word's text: those and the values that run to the end of the word. */
const WORD_RULES: readonly TextRule[] = [...DATA_RULES, assignedValue, headerValue];

/**
 * `--token X`, `-password X`: the word after a flag that names a credential (`--password-stdin` takes
 * none).
 */
function* flagValue(words: readonly Word[]): Generator<Span> {
  // A password attached to its option (`mysql -pwd_secret`) is a value, not a flag named by it.
  const attached = new Set([...attachedPasswords(words)].map(([index]) => index));
  for (let i = 0; i + 1 < words.length; i++) {
    const flag = words[i]?.text ?? '';
    if (attached.has(i)) continue;
    if (/^--?[A-Za-z][\w.-]*$/.test(flag) && isCredentialName(flag) && !/stdin$/i.test(flag)) {
      yield* wordSpan(words[i + 1]);
    }
  }
}

/** `-H Authorization: Bearer X` unquoted: the word after a header name (and its scheme). */
function* headerWord(words: readonly Word[]): Generator<Span> {
  for (let i = 0; i + 1 < words.length; i++) {
    const lead = /^([\w.-]+):[ \t]*(\S+[ \t]*)?$/.exec(words[i]?.text ?? '');
    if (lead === null || !isCredentialName(lead[1] ?? '')) continue;
    if (lead[2] !== undefined && !AUTH_SCHEME.test(lead[2].trim())) continue; // the value is in the word
    const schemeNext = lead[2] === undefined && AUTH_SCHEME.test(words[i + 1]?.text ?? '');
    yield* wordSpan(words[i + (schemeNext ? 2 : 1)]);
  }
}

/** `Bearer X` as two words: the token (eight characters or more, as in a word). */
function* bearerWord(words: readonly Word[]): Generator<Span> {
  for (let i = 0; i + 1 < words.length; i++) {
    const token = words[i + 1];
    if (/^bearer$/i.test(words[i]?.text ?? '') && (token?.text.length ?? 0) >= 8) yield* wordSpan(token);
  }
}

/** `aws configure set aws_secret_access_key X`, `git config github.token X`: the value after the name. */
function* settingValue(words: readonly Word[]): Generator<Span> {
  const from = words.findIndex((word) => word.text === 'set' || word.text === 'config');
  if (from < 0) return;
  for (let i = from + 1; i + 1 < words.length; i++) {
    const name = words[i]?.text ?? '';
    if (/^[\w.:/@-]+$/.test(name) && !name.startsWith('-') && isCredentialName(name)) {
      yield* wordSpan(words[i + 1]);
      i++; // the value is not a name: a secret like `Pwd.-a-A` would mask the word after it
    }
  }
}

/**
 * A program's options whose value is a password whatever they are called: `option value`, `-oVALUE`,
 * `--option=value`. mysql's `-p` takes its value only attached (`-p db` asks and opens `db`).
 */
interface ProgramPasswords {
  readonly program: RegExp;
  readonly options: readonly string[];
  readonly separate: boolean;
}

const PROGRAM_PASSWORDS: readonly ProgramPasswords[] = [
  { program: /^(?:mysql\w*|mariadb[\w-]*)$/, options: ['-p'], separate: false },
  { program: /^curl$/, options: ['-u', '--user', '-U', '--proxy-user', '-b'], separate: true },
  { program: /^sshpass$/, options: ['-p'], separate: true },
  { program: /^redis-cli$/, options: ['-a'], separate: true },
  // docker, podman, helm registry, az … login
  { program: /^login$/, options: ['-p'], separate: true },
];

/**
 * The words of a command holding a `PROGRAM_PASSWORDS` option's value: `[index, where the value
 * starts]` (0 for a value in a word of its own, after its option).
 */
function* attachedPasswords(words: readonly Word[]): Generator<readonly [number, number]> {
  for (const { program, options, separate } of PROGRAM_PASSWORDS) {
    const from = words.findIndex((word) => program.test(programName(word)));
    if (from < 0) continue;
    for (let i = from + 1; i < words.length; i++) {
      const text = words[i]?.text ?? '';
      for (const option of options) {
        if (text === option && separate && i + 1 < words.length) yield [i + 1, 0];
        const attached = option.startsWith('--') ? `${option}=` : option;
        if (text.startsWith(attached) && text !== option) yield [i, attached.length];
      }
    }
  }
}

/** The values of `PROGRAM_PASSWORDS` options after their program in a command. */
function* programPassword(words: readonly Word[]): Generator<Span> {
  for (const [index, start] of attachedPasswords(words)) {
    const word = words[index];
    if (word !== undefined) yield* part(word, start);
  }
}

/** All of `word`, if there is one. */
function wordSpan(word: Word | undefined): Span[] {
  return word === undefined ? [] : part(word);
}

/** Rules over each command's words. */
const COMMAND_RULES: readonly CommandRule[] = [
  flagValue,
  headerWord,
  bearerWord,
  settingValue,
  programPassword,
];
