// Shared admin test inputs: the acme-build filter set (a DSL document with an inline test) and a
// request whose tool output it shrinks.
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ADMIN_FIXTURES = path.join(__dirname, '..', 'fixtures', 'admin');
export const ACME_FILTER_YAML = readFileSync(path.join(ADMIN_FIXTURES, 'acme-build.yaml'), 'utf8');
export const ACME_FILTER_FAILING_YAML = readFileSync(path.join(ADMIN_FIXTURES, 'acme-build.failing.yaml'), 'utf8');

/** An OpenAI request whose last tool output is an acme-build run with `progress` noise lines. */
export function acmeBuildRequest(noiseLines: number) {
  const noise = Array.from({ length: noiseLines }, (_, i) => `progress ${i}%`).join('\n');
  return {
    model: 'gpt-4o',
    messages: [
      { role: 'user', content: 'build it' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'shell', arguments: '{"command":"acme-build all"}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: `$ acme-build all\n${noise}\ncompiled 3 units\ndone` },
    ],
  };
}
