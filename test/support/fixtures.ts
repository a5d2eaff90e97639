// Component cases as folders: test/fixtures/components/<component>/<case>/{input.json,
// config.yaml, output.json}. A new case is a new folder; the runner needs no code change.
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { Dialect, Message, CacheView } from '@context-guru/components';

export const FIXTURE_ROOT = join(__dirname, '..', 'fixtures', 'components');

interface FixtureInput {
  messages: Message[];
  provider?: Dialect;
  cache?: Partial<CacheView>;
  frozen?: Record<string, string>;
  lost?: string[];
  kept?: string[];
  existingBreakpoints?: number;
}

interface FixtureOutput {
  messages: Message[];
  gates?: Record<string, number>;
  /** Number of stash keys the run returned. */
  keys?: number;
}

export interface FixtureCase {
  component: string;
  name: string;
  input: FixtureInput;
  config: unknown;
  output: FixtureOutput;
}

export function fixtureComponents(): string[] {
  return existsSync(FIXTURE_ROOT) ? readdirSync(FIXTURE_ROOT).sort() : [];
}

export function loadFixtureCases(component: string): FixtureCase[] {
  const dir = join(FIXTURE_ROOT, component);
  return readdirSync(dir)
    .sort()
    .map((name) => {
      const caseDir = join(dir, name);
      const configPath = join(caseDir, 'config.yaml');
      return {
        component,
        name,
        input: JSON.parse(readFileSync(join(caseDir, 'input.json'), 'utf8')) as FixtureInput,
        config: existsSync(configPath) ? (parseYaml(readFileSync(configPath, 'utf8')) ?? undefined) : undefined,
        output: JSON.parse(readFileSync(join(caseDir, 'output.json'), 'utf8')) as FixtureOutput,
      };
    });
}
