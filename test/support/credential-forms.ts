/**
 * The forms a credential takes in a command line (issue 24, item 6), one line each, shared by the
 * masking tests: the unit table, the properties and the records API check. Each writes its secret as
 * the shell needs it (quoted or escaped), so any printable secret can be put in.
 */

/** A form of credential in a command line. */
export interface CredentialForm {
  readonly name: string;
  /** The command line with `secret` in it. */
  readonly line: (secret: string) => string;
  /** The line as recorded when the secret is plain (letters, digits, `_.-`, not first `-`). */
  readonly masked: string;
}

/** `text` as one unquoted shell word: every character the shell would read specially escaped. */
export function bare(text: string): string {
  return text.replace(/[^A-Za-z0-9_.,:/@%+=-]/g, '\\$&');
}

/** `text` in single quotes (a quote in it as `'\''`). */
export function singleQuoted(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

/** `text` in double quotes (`"`, `\`, `$` and backquote escaped). */
export function doubleQuoted(text: string): string {
  return `"${text.replace(/["\\$`]/g, '\\$&')}"`;
}

/** `text` as a Python string literal in single quotes. */
function pythonQuoted(text: string): string {
  return `'${text.replace(/[\\']/g, '\\$&')}'`;
}

/** `text` as an SQL string literal (a quote in it doubled). */
function sqlQuoted(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

const API = 'https://api.example/v1';
const GITLAB = 'https://gitlab.example/api/v4/projects';

/** Every form, by name. */
export const CREDENTIAL_FORMS: readonly CredentialForm[] = [
  {
    name: 'export NAME="value"',
    line: (s) => `export X_API_KEY=${doubleQuoted(s)} && ./run.sh`,
    masked: 'export X_API_KEY="***" && ./run.sh',
  },
  {
    name: "NAME='value' command",
    line: (s) => `X_API_KEY=${singleQuoted(s)} ./run.sh`,
    masked: "X_API_KEY='***' ./run.sh",
  },
  {
    name: 'NAME=value command',
    line: (s) => `OPENAI_API_KEY=${bare(s)} python run.py`,
    masked: 'OPENAI_API_KEY=*** python run.py',
  },
  {
    name: 'a password variable',
    line: (s) => `PGPASSWORD=${bare(s)} psql -h db -U app`,
    masked: 'PGPASSWORD=*** psql -h db -U app',
  },
  {
    name: 'mysql -pPASS',
    line: (s) => `mysql -u root -p${bare(s)} shop`,
    masked: 'mysql -u root -p*** shop',
  },
  {
    name: "mysql -p'PASS'",
    line: (s) => `mysql -u root -p${singleQuoted(s)} shop`,
    masked: "mysql -u root -p'***' shop",
  },
  {
    name: '--password=PASS',
    line: (s) => `mysql -u root --password=${singleQuoted(s)} shop`,
    masked: "mysql -u root --password='***' shop",
  },
  {
    name: '--password PASS',
    line: (s) => `mysql -u root --password ${bare(s)} shop`,
    masked: 'mysql -u root --password *** shop',
  },
  {
    name: '--token X',
    line: (s) => `vercel deploy --token ${bare(s)} --prod`,
    masked: 'vercel deploy --token *** --prod',
  },
  {
    name: '--token=X',
    line: (s) => `vercel deploy --token=${doubleQuoted(s)} --prod`,
    masked: 'vercel deploy --token="***" --prod',
  },
  {
    name: '--api-key X',
    line: (s) => `llm --api-key ${singleQuoted(s)} 'say hi'`,
    masked: "llm --api-key '***' 'say hi'",
  },
  {
    name: '--secret X',
    line: (s) => `deployer --secret ${bare(s)} up`,
    masked: 'deployer --secret *** up',
  },
  {
    name: '--access-token X',
    line: (s) => `hf upload --access-token ${bare(s)} model ./out`,
    masked: 'hf upload --access-token *** model ./out',
  },
  {
    name: '--client-secret=X',
    line: (s) => `az login --service-principal --client-secret=${bare(s)} --tenant t`,
    masked: 'az login --service-principal --client-secret=*** --tenant t',
  },
  {
    name: 'curl -u user:PASS',
    line: (s) => `curl -u me:${bare(s)} ${API}`,
    masked: `curl -u *** ${API}`,
  },
  {
    name: "curl --user 'user:PASS'",
    line: (s) => `curl --user ${singleQuoted(`me:${s}`)} ${API}`,
    masked: `curl --user '***' ${API}`,
  },
  {
    name: 'aws configure set aws_secret_access_key X',
    line: (s) => `aws configure set aws_secret_access_key ${bare(s)}`,
    masked: 'aws configure set aws_secret_access_key ***',
  },
  {
    name: 'aws configure set aws_session_token X',
    line: (s) => `aws configure set aws_session_token ${singleQuoted(s)} --profile dev`,
    masked: "aws configure set aws_session_token '***' --profile dev",
  },
  {
    name: 'aws configure set aws_access_key_id X',
    line: (s) => `aws configure set aws_access_key_id ${bare(s)}`,
    masked: 'aws configure set aws_access_key_id ***',
  },
  {
    name: 'git config NAME X',
    line: (s) => `git config --global github.token ${bare(s)}`,
    masked: 'git config --global github.token ***',
  },
  {
    name: 'JSON "api_key": "X" in single quotes',
    line: (s) => `curl -d ${singleQuoted(`{"api_key": ${JSON.stringify(s)}, "model": "m"}`)} ${API}`,
    masked: `curl -d '{"api_key": "***", "model": "m"}' ${API}`,
  },
  {
    name: 'JSON "password":"X" in double quotes',
    line: (s) => `curl -d ${doubleQuoted(`{"user":"me","password":${JSON.stringify(s)}}`)} ${API}`,
    masked: `curl -d "{\\"user\\":\\"me\\",\\"password\\":\\"***\\"}" ${API}`,
  },
  {
    name: 'JSON "token": "X" in a heredoc',
    line: (s) => `cat > auth.json <<'EOF'\n{"token": ${JSON.stringify(s)}, "ttl": 60}\nEOF`,
    masked: `cat > auth.json <<'EOF'\n{"token": "***", "ttl": 60}\nEOF`,
  },
  {
    name: "a dict's 'secret': 'X' in python -c",
    line: (s) => `python3 -c ${doubleQuoted(`conf = {'client_secret': ${pythonQuoted(s)}}; print(1)`)}`,
    masked: `python3 -c "conf = {'client_secret': '***'}; print(1)"`,
  },
  {
    name: "-H 'PRIVATE-TOKEN: X'",
    line: (s) => `curl -H ${singleQuoted(`PRIVATE-TOKEN: ${s}`)} ${GITLAB}`,
    masked: `curl -H 'PRIVATE-TOKEN: ***' ${GITLAB}`,
  },
  {
    name: '-H "PRIVATE-TOKEN: X"',
    line: (s) => `curl --header ${doubleQuoted(`PRIVATE-TOKEN: ${s}`)} ${GITLAB}`,
    masked: `curl --header "PRIVATE-TOKEN: ***" ${GITLAB}`,
  },
  {
    name: '-H PRIVATE-TOKEN:X unquoted',
    line: (s) => `curl -H PRIVATE-TOKEN:${bare(s)} ${GITLAB}`,
    masked: `curl -H PRIVATE-TOKEN:*** ${GITLAB}`,
  },
  {
    name: "-H 'X-Vault-Token: X'",
    line: (s) => `curl -H ${singleQuoted(`X-Vault-Token: ${s}`)} https://vault.example/v1/kv`,
    masked: "curl -H 'X-Vault-Token: ***' https://vault.example/v1/kv",
  },
  {
    name: "-H 'X-Client-Secret: X'",
    line: (s) => `curl -H ${singleQuoted(`X-Client-Secret: ${s}`)} ${API}`,
    masked: `curl -H 'X-Client-Secret: ***' ${API}`,
  },
  {
    name: "-H 'Authorization: Bearer X'",
    line: (s) => `curl -H ${singleQuoted(`Authorization: Bearer ${s}`)} ${API}`,
    masked: `curl -H 'Authorization: Bearer ***' ${API}`,
  },
  {
    name: '-H "x-api-key: X"',
    line: (s) => `curl -H ${doubleQuoted(`x-api-key: ${s}`)} ${API}`,
    masked: `curl -H "x-api-key: ***" ${API}`,
  },
  {
    name: "-H 'Cookie: session=X'",
    line: (s) => `curl -H ${singleQuoted(`Cookie: session=${s}; theme=dark`)} ${API}`,
    masked: `curl -H 'Cookie: ***' ${API}`,
  },
  {
    name: 'a bearer token',
    line: (s) => `echo Bearer ${bare(s)} > .auth`,
    masked: 'echo Bearer *** > .auth',
  },
  {
    name: "a URL's user and password",
    line: (s) => `git clone https://me:${bare(encodeURIComponent(s))}@github.example/r.git`,
    masked: 'git clone https://***@github.example/r.git',
  },
  {
    name: "a URL's token as its user",
    line: (s) => `pip install git+https://${bare(encodeURIComponent(s))}@github.example/r.git`,
    masked: 'pip install git+https://***@github.example/r.git',
  },
  {
    name: 'a query parameter',
    line: (s) => `curl ${singleQuoted(`${API}/items?api_key=${encodeURIComponent(s)}`)}`,
    masked: `curl '${API}/items?api_key=***'`,
  },
  {
    name: 'sh -c "mysql -pPASS"',
    line: (s) => `sh -c ${doubleQuoted(`mysql -p${bare(s)} shop < dump.sql`)}`,
    masked: 'sh -c "mysql -p*** shop < dump.sql"',
  },
  {
    name: 'bash -lc \'export NAME="value"\'',
    line: (s) => `bash -lc ${singleQuoted(`export GITHUB_TOKEN=${doubleQuoted(s)}; gh repo list`)}`,
    masked: `bash -lc 'export GITHUB_TOKEN="***"; gh repo list'`,
  },
  {
    name: 'sshpass -p PASS',
    line: (s) => `sshpass -p ${singleQuoted(s)} ssh me@host uptime`,
    masked: "sshpass -p '***' ssh me@host uptime",
  },
  {
    name: 'redis-cli -a PASS',
    line: (s) => `redis-cli -h cache -a ${bare(s)} ping`,
    masked: 'redis-cli -h cache -a *** ping',
  },
  {
    name: 'docker login -p PASS',
    line: (s) => `docker login -u me -p ${bare(s)} registry.example`,
    masked: 'docker login -u me -p *** registry.example',
  },
  {
    name: "SQL PASSWORD '…'",
    line: (s) => `psql -c ${doubleQuoted(`ALTER USER app WITH PASSWORD ${sqlQuoted(s)}`)}`,
    masked: `psql -c "ALTER USER app WITH PASSWORD '***'"`,
  },
  {
    name: 'a private key',
    line: (s) => `cat > id.pem <<'EOF'\n-----BEGIN PRIVATE KEY-----\n${s}\n-----END PRIVATE KEY-----\nEOF`,
    masked: `cat > id.pem <<'EOF'\n-----BEGIN PRIVATE KEY-----\n***\n-----END PRIVATE KEY-----\nEOF`,
  },
];

/** What a line of `form` keeps whatever its secret: everything before the value. */
export function keptPrefix(form: CredentialForm): string {
  return form.masked.slice(0, form.masked.indexOf('***'));
}

/**
 * What of `secret` a masked line of `form` still shows: the secret whole, or a run of three or more of
 * its letters and digits (which every quoting and escaping above leaves as they are) that the form's own
 * text does not hold.
 */
export function shownParts(masked: string, secret: string, form: CredentialForm): string[] {
  const runs = secret.match(/[A-Za-z0-9]{3,}/g) ?? [];
  return [secret, ...runs].filter((part) => masked.includes(part) && !form.masked.includes(part));
}
