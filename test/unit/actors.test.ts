import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Journal } from '../../actors/journal.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function journalPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sdk-journal-'));
  dirs.push(dir);
  return join(dir, 'state', 'journal.jsonl');
}

describe('journal', () => {
  it('keeps records across reopen, one JSON line each, readable by its owner only', () => {
    const path = journalPath();
    const first = Journal.open<{ n: number }>(path);
    first.append({ n: 1 });
    first.append({ n: 2 });
    first.close();
    const second = Journal.open<{ n: number }>(path);
    expect(second.records).toEqual([{ n: 1 }, { n: 2 }]);
    second.close();
    expect(readFileSync(path, 'utf8')).toBe('{"n":1}\n{"n":2}\n');
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('drops a torn last record (a crash mid-write) and keeps everything before it', () => {
    const path = journalPath();
    const journal = Journal.open<{ n: number }>(path);
    journal.append({ n: 1 });
    journal.close();
    appendFileSync(path, '{"n":2');
    const reopened = Journal.open<{ n: number }>(path);
    expect(reopened.records).toEqual([{ n: 1 }]);
    reopened.append({ n: 3 });
    reopened.close();
    const again = Journal.open<{ n: number }>(path);
    expect(again.records).toEqual([{ n: 1 }, { n: 3 }]);
    again.close();
  });
});
