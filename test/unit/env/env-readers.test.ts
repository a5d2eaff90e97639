// The one set of environment readers (gateway, its model environment, the standalone admin): a
// value is trimmed and a blank one is unset, in every reader, and a bad one is a coded problem
// with the default standing in.
import type { EnvProblem } from '../../../libs/engine/src/env/env-errors';
import { envReaders, HTTP_URL } from '../../../libs/engine/src/env/env-readers';
import { parseEnv } from '../../../apps/gateway/src/env';
import { parseModelEnv } from '../../../apps/gateway/src/model/model-env';
import { parseAdminEnv } from '../../../apps/admin/src/admin-env';

function read(src: Record<string, string>) {
  const problems: EnvProblem[] = [];
  return { problems, ...envReaders(src, problems) };
}

describe('envReaders', () => {
  it('trims every value: a padded choice, number or URL is the value itself', () => {
    const r = read({ MODE: ' never\n', N: '\t42 ', U: ' http://h:1/v1/ \n', T: '  x ' });
    expect(r.oneOf('MODE', ['auto', 'never'] as const, 'auto')).toBe('never');
    expect(r.int('N', 0)).toBe(42);
    expect(r.url('U', undefined, HTTP_URL)).toBe('http://h:1/v1');
    expect(r.text('T')).toBe('x');
    expect(r.problems).toEqual([]);
  });

  it('takes a blank value as unset (the default), not as a value', () => {
    const r = read({ MODE: '  ', N: ' \n', U: ' ', T: '\t' });
    expect(r.oneOf('MODE', ['auto', 'never'] as const, 'auto')).toBe('auto');
    expect(r.int('N', 4000, 0, 65535)).toBe(4000);
    expect(r.url('U', 'https://d')).toBe('https://d');
    expect(r.text('T')).toBeUndefined();
    expect(r.problems).toEqual([]);
  });

  it('reports a bad value with its code and the trimmed value, and the default stands in', () => {
    const r = read({ MODE: ' sometimes ', N: '7', U: 'ftp://x' });
    expect(r.oneOf('MODE', ['auto', 'never'] as const, undefined)).toBeUndefined();
    expect(r.int('N', 1, 0, 5)).toBe(1);
    expect(r.url('U', 'https://d', HTTP_URL)).toBe('https://d');
    expect(r.problems).toEqual([
      { code: 'invalid_choice', variable: 'MODE', message: 'MODE="sometimes": expected one of auto, never' },
      { code: 'invalid_integer', variable: 'N', message: 'N="7": expected an integer between 0 and 5' },
      { code: 'invalid_url', variable: 'U', message: 'U="ftp://x": expected an http(s) URL' },
    ]);
  });

  it('is what the gateway, its model environment and the admin read choices with (one trimming everywhere)', () => {
    expect(parseEnv({ INJECT_EXPAND: 'never\n', PORT: ' ' })).toMatchObject({ injectExpand: 'never', port: 4000 });
    expect(parseModelEnv({ CHEAP_MODEL: ' m ', CHEAP_MODEL_PROVIDER: ' anthropic ' }).cheap).toMatchObject({
      model: 'm',
      provider: 'anthropic',
    });
    expect(parseAdminEnv({ LOG_LEVEL: ' warn ', DATABASE_URL: ' postgres://db/cg\n' })).toMatchObject({
      logLevel: 'warn',
      databaseUrl: 'postgres://db/cg',
    });
  });
});
