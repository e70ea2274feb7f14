/**
 * Issue 24 item 6: credentials in command lines are masked before sandboxd records them (the records API
 * and the inspector show these lines). Each form of `CREDENTIAL_FORMS` is checked with a plain secret
 * (the exact line recorded) and with one full of shell characters (nothing of it shown); lines without
 * a credential are recorded as they are.
 */
import { describe, expect, it } from 'vitest';
import { isCredentialName, maskCredentials } from '../../../daemon/credential-masking.js';
import { CREDENTIAL_FORMS, keptPrefix, shownParts } from '../../support/credential-forms.js';

const PLAIN = 'S3cr3t-Value_0123456789';
/** Every character the forms quote or escape, between letters so that the runs can be found. */
const NASTY = `Xq7'Zr8"Wp9\\Vk6$(Tn5)\`Ub4;Mc3|Ld2&Ke1<Jf0>Ig9{Hh8}Gi7*Fj6?Ek5~Dl4#Cm3!Bn2=Ao1:Yp0@Zq%9,8+7`;

describe('a recorded command line', () => {
  it.each(CREDENTIAL_FORMS)('masks $name', (form) => {
    const masked = maskCredentials(form.line(PLAIN));
    expect(masked).toBe(form.masked);
    expect(masked).not.toContain(PLAIN);
    expect(masked.startsWith(keptPrefix(form))).toBe(true); // the program and the name stay
  });

  it.each(CREDENTIAL_FORMS)('masks $name whatever quotes and escapes the secret holds', (form) => {
    const masked = maskCredentials(form.line(NASTY));
    expect(shownParts(masked, NASTY, form)).toEqual([]);
    expect(masked.startsWith(keptPrefix(form))).toBe(true);
  });

  it.each([
    [
      "curl -H 'Authorization: Bearer sk-live-0123456789' https://x",
      "curl -H 'Authorization: Bearer ***' https://x",
    ],
    ['curl -H "x-api-key: abc123def456" https://x', 'curl -H "x-api-key: ***" https://x'],
    ['git clone https://user:hunter22@github.example/r.git', 'git clone https://***@github.example/r.git'],
    ['git clone https://ghp_token0123@github.example/r.git', 'git clone https://***@github.example/r.git'],
    ['OPENAI_API_KEY=sk-abc123 python run.py', 'OPENAI_API_KEY=*** python run.py'],
    ['mysql --password=s3cret -u root', 'mysql --password=*** -u root'],
    // An unclosed quote runs to the end: the rest of the line is masked with it.
    ['export X_TOKEN="abc def; ls', 'export X_TOKEN="***'],
    // Nested command lines are read too, each command on its own.
    ['X=$(curl -u me:pw https://x) && echo ok', 'X=$(curl -u *** https://x) && echo ok'],
    ["ssh host 'mysql -pabc123 shop'", "ssh host 'mysql -p*** shop'"],
    // A password that reads like a credential flag's name is still the option's value (seen by the
    // property test: the database after it was masked too).
    ['sh -c "mysql -pwd_.0--A- shop < dump.sql"', 'sh -c "mysql -p*** shop < dump.sql"'],
    // A setting's value that reads like a credential's name is a value, not a name (seen by the property
    // test: `--profile` after it was masked as its value).
    [
      "aws configure set aws_session_token 'Pwd.-a-A' --profile dev",
      "aws configure set aws_session_token '***' --profile dev",
    ],
    ['curl -H PRIVATE-TOKEN: abc123 https://x', 'curl -H PRIVATE-TOKEN: *** https://x'],
    [
      "npm config set '//registry.example/:_authToken' npm_abc",
      "npm config set '//registry.example/:_authToken' ***",
    ],
    ['echo hello && ls -la /home/user', 'echo hello && ls -la /home/user'],
  ])('masks what looks like a credential: %s', (command, shown) => {
    expect(maskCredentials(command)).toBe(shown);
  });

  it.each([
    'echo hello && ls -la /home/user',
    'TOKENIZERS_PARALLELISM=false python train.py',
    'git log --author=me --since=2.days',
    'ssh -p 2222 me@host uptime',
    'docker run -p 8080:80 -e MODE=dev nginx',
    'mkdir -p /tmp/x && cd /tmp/x',
    'export PATH="$HOME/bin:$PATH"',
    'curl -H "Content-Type: application/json" -d \'{"model": "m", "keyboard": 1}\' https://x',
    'mysql -u root -p shop', // asks for the password: shop is the database
    "printf '%s\\n' \"it's\" | grep -c s",
  ])('leaves a line without a credential as it is: %s', (command) => {
    expect(maskCredentials(command)).toBe(command);
  });
});

describe('a credential name', () => {
  it.each([
    'X_API_KEY',
    'OPENAI_API_KEY',
    'PGPASSWORD',
    'DB_PASS',
    'MYSQL_PWD',
    '--access-token',
    'PRIVATE-TOKEN',
    'Authorization',
    'x-api-key',
    'apiKey',
    'client_secret',
    'aws_secret_access_key',
    'Cookie',
    '-storepass',
    'X-Amz-Signature',
  ])('says credential: %s', (name) => {
    expect(isCredentialName(name)).toBe(true);
  });

  it.each(['TOKENIZERS_PARALLELISM', 'AUTHOR', 'KEYBOARD', 'monkey', 'PATH', 'HOME', 'passthrough', 'user'])(
    'does not: %s',
    (name) => {
      expect(isCredentialName(name)).toBe(false);
    },
  );
});
