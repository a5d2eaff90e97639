// extract's query keywords are built from each picked text's memoised keyword set; they must be
// exactly the set (in the same order) of the joined query context, on every message list we hold.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Message } from '@context-guru/components';
import { keywords } from '../../../libs/components/src/shared/keywords';
import { queryContext, queryKeywords } from '../../../libs/components/src/shared/line-projection';
import { FIXTURE_ROOT } from '../../support/fixtures';

const fixtureLists = (): Array<[string, Message[]]> =>
  readdirSync(FIXTURE_ROOT).flatMap((component) =>
    readdirSync(join(FIXTURE_ROOT, component)).flatMap((name): Array<[string, Message[]]> => {
      const file = join(FIXTURE_ROOT, component, name, 'input.json');
      try {
        const input = JSON.parse(readFileSync(file, 'utf8')) as { messages?: Message[] };
        return input.messages ? [[`${component}/${name}`, input.messages]] : [];
      } catch {
        return [];
      }
    }),
  );

describe('query keywords', () => {
  it('equal the keywords of the joined query context, in order, on every fixture', () => {
    const lists = fixtureLists();
    expect(lists.length).toBeGreaterThan(20);
    for (const [name, messages] of lists) {
      expect([name, ...queryKeywords(messages)]).toEqual([name, ...keywords(queryContext(messages))]);
    }
  });

  it('split nothing at a piece boundary: markers, call arguments and repeats', () => {
    const messages: Message[] = [
      { role: 'user', content: 'Deployment ledger-api keeps RESTARTING <<cg:abcdef0123456789>> after migrations' },
      { role: 'tool', content: 'pod ledger-api-7c9f readiness probe failed\nrestarting' },
      {
        role: 'assistant',
        content: 'Checking the readiness probe',
        tool_calls: [
          { id: 'a', name: 'bash', arguments: '{"command":"kubectl describe pod ledger-api-7c9f","timeout":30}' },
          { id: 'b', name: 'bash', arguments: 'not json: grep readiness' },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'focus on the probe ' },
          { type: 'text', text: 'configuration' },
        ],
      },
    ];
    const keys = [...keywords(queryContext(messages))];
    expect(keys).toContain('kubectl');
    expect(keys).not.toContain('abcdef0123456789');
    // Twice: the second answer comes from the memo and must not have been changed by the first.
    expect([...queryKeywords(messages)]).toEqual(keys);
    expect([...queryKeywords(messages)]).toEqual(keys);
  });
});
