// The vendored real corpus (bench/corpus-real/): every listed session loads, matches the size and
// digest index.json records, is a well-formed client request in both dialects on every turn,
// respects the import's caps and scrubs, and names its public source; a changed file is refused
// with a message that says which and what to do.
import { validateProviderShape } from '../../../libs/engine/src/wire/shape-validator';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toGeminiBody } from '../../../bench/gemini-body';
import { REAL_CORPUS_DIR, realCorpus, realRequest } from '../../../bench/real-corpus';

interface Source {
  id: string;
  repo: string;
  commit: string;
  path: string;
  license: string;
  harness: string;
  model: string;
}
const index = JSON.parse(readFileSync(join(REAL_CORPUS_DIR, 'index.json'), 'utf8')) as {
  maxToolOutputChars: number;
  sources: Source[];
  trajectories: Array<{ id: string; file: string }>;
};
const sessions = realCorpus();

/** Every tool output of a session, both dialects. */
function toolOutputs(s: (typeof sessions)[number]): string[] {
  const out: string[] = [];
  for (const m of s.formats.openai.messages) if (m.role === 'tool' && typeof m.content === 'string') out.push(m.content);
  for (const m of s.formats.anthropic.messages) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content as Array<Record<string, unknown>>)
      if (b.type === 'tool_result' && typeof b.content === 'string') out.push(b.content);
  }
  return out;
}

describe('the real corpus', () => {
  it('holds every session index.json lists, each with its public source and a permissive licence', () => {
    expect(sessions.map((s) => s.id)).toEqual(index.trajectories.map((t) => t.id));
    expect(
      readdirSync(REAL_CORPUS_DIR)
        .filter((f) => f.startsWith('real-'))
        .sort(),
    ).toEqual(index.trajectories.map((t) => t.file).sort());
    for (const s of sessions) {
      const source = index.sources.find((x) => x.id === s.id);
      expect(source).toBeDefined();
      expect(source?.commit).toMatch(/^[0-9a-f]{40}$/);
      expect(source?.license).toMatch(/^(MIT|Apache-2\.0|BSD|CC-BY)/);
    }
  });

  it('is a valid client request in both dialects on every turn', () => {
    for (const s of sessions) {
      for (const dialect of ['anthropic', 'openai'] as const) {
        const problems: string[] = [];
        for (let t = 1; t <= s.stats.requests; t++) {
          for (const p of validateProviderShape(dialect, realRequest(s, dialect, t))) problems.push(`${s.id} ${dialect} turn ${t}: ${p}`);
        }
        expect(problems).toEqual([]);
      }
    }
  });

  it('is a valid Gemini CLI request on every turn (bench/gemini-body.ts)', () => {
    const problems: string[] = [];
    for (const s of sessions) {
      for (let t = 1; t <= s.stats.requests; t++) {
        for (const p of validateProviderShape('gemini', toGeminiBody(realRequest(s, 'openai', t))))
          problems.push(`${s.id} turn ${t}: ${p}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('keeps tool outputs under the cap, without ANSI codes, registry hosts or home directories', () => {
    const bad: string[] = [];
    for (const s of sessions) {
      for (const o of toolOutputs(s)) {
        if (o.length > index.maxToolOutputChars) bad.push(`${s.id}: output of ${o.length} chars`);
        // eslint-disable-next-line no-control-regex
        if (/\u001b\[/.test(o)) bad.push(`${s.id}: ANSI code`);
        if (/registry\.npmjs\.org|pypi\.org\/simple|files\.pythonhosted\.org/.test(o)) bad.push(`${s.id}: registry host`);
        if (/\/(Users|home)\/(?!user\b)[a-z][\w.-]*\//.test(o)) bad.push(`${s.id}: home path ${/\/(Users|home)\/[\w.-]+/.exec(o)?.[0]}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('refuses a file that no longer matches index.json, naming it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'real-corpus-'));
    for (const f of readdirSync(REAL_CORPUS_DIR)) copyFileSync(join(REAL_CORPUS_DIR, f), join(dir, f));
    const victim = index.trajectories[0]?.file ?? '';
    writeFileSync(join(dir, victim), readFileSync(join(dir, victim), 'utf8').replace('"role"', '"role" '));
    expect(() => realCorpus(dir)).toThrow(
      new RegExp(`${victim.replace(/\./g, '\\.')} is \\d+ bytes with sha256 [0-9a-f]{64}, but index\\.json records`),
    );
  });
});
