// The public trajectories scripts/import-real-trajectories.ts converts: where each one is (repo,
// commit, path), which harness and model produced it, and under which licence it is published.
import type { SourceFormat } from './conversation';

export interface Source {
  id: string;
  repo: string;
  commit: string;
  path: string;
  format: SourceFormat;
  harness: string;
  model: string;
  license: string;
  /** What the session works on, e.g. "django/django issue 14752". */
  task: string;
  /** Facts about the source worth keeping in the description. */
  notes: string[];
}

const swebench = (instance: string): string => {
  const [owner, rest] = instance.split('__');
  const cut = rest?.lastIndexOf('-') ?? -1;
  return `${owner}/${rest?.slice(0, cut)} issue ${rest?.slice(cut + 1)}`;
};

const MINI_PR = '816';
const DEEPSEEK_COMMIT = 'ec0e8e849fea5b1619deb1753007201000904672';
const deepseek = (dir: string, instance: string, short: string): Source => ({
  id: `real-mini2-deepseek-${short}`,
  repo: 'SWE-agent/mini-swe-agent',
  commit: DEEPSEEK_COMMIT,
  path: `output/${dir}/${instance}/${instance}.traj.json`,
  format: 'mini-toolcall',
  harness: 'mini-swe-agent 2.2.7 (tool calls)',
  model: 'deepseek/deepseek-chat (DeepSeek API via litellm)',
  license: `MIT (SWE-agent/mini-swe-agent; contributed in pull request #${MINI_PR}, under the repository licence)`,
  task: swebench(instance),
  notes: [`an evaluation run contributed in pull request #${MINI_PR} (commit reachable as refs/pull/${MINI_PR}/head), run "${dir}"`],
});

const GEMINI_COMMIT = 'd12a71affd95403b036b2bdbd827349b77bfffb9';
const gemini = (instance: string, short: string): Source => ({
  id: `real-mini1-gemini3pro-${short}`,
  repo: 'gruckion/mini-swe-agent',
  commit: GEMINI_COMMIT,
  path: `swebench_results/20251118_gemini-3-pro-74pct/trajs/${instance}/${instance}.traj.json`,
  format: 'mini-text',
  harness: 'mini-swe-agent 1.15.0 (text actions)',
  model: 'google/gemini-3-pro-preview (OpenRouter)',
  license: 'MIT (repository licence of gruckion/mini-swe-agent, a fork of SWE-agent/mini-swe-agent)',
  task: swebench(instance),
  notes: [
    'from the SWE-bench Verified bash-only run of 2025-11-18 that the fork republishes (s3://swe-bench-experiments/bash-only/20251118_mini-v1.15.0_gemini-3-pro-preview-20251118)',
  ],
});

const SWEAGENT_TEST = 'tests/test_data/trajectories';

export const SOURCES: Source[] = [
  deepseek('deepseek_chat_test_1-100', 'django__django-14752', 'django-14752'),
  deepseek('deepseek_chat_test_1-100', 'astropy__astropy-12907', 'astropy-12907'),
  deepseek('deepseek_chat_test_1-100', 'django__django-11039', 'django-11039'),
  deepseek('deepseek_chat_dev', 'sqlfluff__sqlfluff-2419', 'sqlfluff-2419'),
  deepseek('deepseek_chat_dev', 'pydicom__pydicom-1256', 'pydicom-1256'),
  deepseek('deepseek_chat_dev', 'pyvista__pyvista-4315', 'pyvista-4315'),
  deepseek('deepseek_chat_test_1-100', 'django__django-14999', 'django-14999'),
  gemini('django__django-14765', 'django-14765'),
  gemini('sympy__sympy-23534', 'sympy-23534'),
  gemini('astropy__astropy-14369', 'astropy-14369'),
  gemini('django__django-14434', 'django-14434'),
  gemini('django__django-11749', 'django-11749'),
  gemini('sphinx-doc__sphinx-9591', 'sphinx-9591'),
  gemini('pytest-dev__pytest-5787', 'pytest-5787'),
  {
    id: 'real-sweagent0-gpt4-testrepo-i1',
    repo: 'SWE-agent/SWE-agent',
    commit: 'e692e9122cfe67e3ae4a8d4db2323b2937148837',
    path: `${SWEAGENT_TEST}/gpt4__swe-agent__test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1/swe-agent__test-repo-i1.traj`,
    format: 'sweagent-text',
    harness: 'SWE-agent 0.x (text actions)',
    model: 'gpt-4 (SWE-agent "gpt4" alias, 2024)',
    license: 'MIT',
    task: 'SWE-agent/test-repo issue 1',
    notes: ['the test fixture of SWE-agent 0.x, with its demonstration in the first user message'],
  },
  {
    id: 'real-sweagent1-gpt4o-testrepo-1c2844',
    repo: 'SWE-agent/SWE-agent',
    commit: '1998ce1168ba672d0a48bebea93a61bc9be433dd',
    path: `${SWEAGENT_TEST}/gpt4__swe-agent-test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1/6e44b9__sweagenttestrepo-1c2844.traj`,
    format: 'sweagent-toolcall',
    harness: 'SWE-agent 1.x (function calling)',
    model: 'gpt-4o (per the replay_config)',
    license: 'MIT',
    task: 'SWE-agent/test-repo (missing colon)',
    notes: ['the test fixture of SWE-agent 1.x'],
  },
];
