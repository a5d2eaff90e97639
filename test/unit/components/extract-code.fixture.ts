// A realistic GitHub REST payload (GET /repos/{owner}/{repo}/issues): the shape and field set the
// API returns, trimmed of URL fields. Newest first, as GitHub orders it.
interface Label {
  id: number;
  node_id: string;
  name: string;
  color: string;
  default: boolean;
  description: string | null;
}

const LABELS: Record<string, Label> = {
  bug: {
    id: 5482910331,
    node_id: 'LA_kwDOJx1Ph88AAAABRs7aew',
    name: 'bug',
    color: 'd73a4a',
    default: true,
    description: "Something isn't working",
  },
  enhancement: {
    id: 5482910336,
    node_id: 'LA_kwDOJx1Ph88AAAABRs7agA',
    name: 'enhancement',
    color: 'a2eeef',
    default: true,
    description: 'New feature or request',
  },
  docs: {
    id: 5482910334,
    node_id: 'LA_kwDOJx1Ph88AAAABRs7afg',
    name: 'documentation',
    color: '0075ca',
    default: true,
    description: 'Improvements or additions to documentation',
  },
  perf: { id: 6120448120, node_id: 'LA_kwDOJx1Ph88AAAABbNkLeA', name: 'performance', color: 'fbca04', default: false, description: null },
  triage: {
    id: 6120448177,
    node_id: 'LA_kwDOJx1Ph88AAAABbNkLsQ',
    name: 'needs-triage',
    color: 'ededed',
    default: false,
    description: 'Not yet reviewed',
  },
};

const ISSUES: Array<[number, string, string[], string, number, string]> = [
  [
    4131,
    'Add CSV export for the reconciliation report',
    ['enhancement'],
    'mkowalski',
    3,
    'Finance asked for a CSV next to the PDF so they can pivot the unmatched entries.',
  ],
  [
    4127,
    'Ledger close fails when a journal line has a zero amount',
    ['bug', 'needs-triage'],
    'tnguyen',
    7,
    'Closing March 2025 raises `ValueError: amount must be non-zero` from `ledger/close.py:212` for journal JE-22817.',
  ],
  [
    4124,
    'Document the FX revaluation cron schedule',
    ['documentation'],
    'apatel',
    0,
    'The runbook still says 02:00 UTC; the cron moved to 03:30 UTC in #4011.',
  ],
  [
    4119,
    'Trial balance off by one cent after currency rounding',
    ['bug'],
    'mkowalski',
    12,
    'EUR→USD conversions round half-even in `fx.convert` but half-up in the report layer.',
  ],
  [
    4113,
    'Speed up account tree loading for tenants with >20k accounts',
    ['performance'],
    'lbrenner',
    5,
    'p95 of GET /accounts/tree is 4.8 s for tenant 8812; most of it is N+1 queries on parent lookup.',
  ],
  [
    4102,
    'Duplicate postings when the import job is retried',
    ['bug', 'performance'],
    'tnguyen',
    9,
    'A retry after a 504 from the bank feed re-posts the whole batch; idempotency key is not checked.',
  ],
  [
    4097,
    'Allow custom fiscal year start month',
    ['enhancement', 'needs-triage'],
    'rsouza',
    2,
    'Customers in AU and NZ need July as the first month of the fiscal year.',
  ],
];

export function githubIssues(): unknown[] {
  return ISSUES.map(([number, title, labels, login, comments, body], k) => ({
    id: 2900000000 + number * 17,
    node_id: `I_kwDOJx1Ph86${(number * 7919).toString(36).toUpperCase()}`,
    number,
    title,
    user: {
      login,
      id: 1000000 + login.length * 7331,
      node_id: `U_kgDOB${login.toUpperCase().slice(0, 6)}`,
      type: 'User',
      site_admin: false,
    },
    labels: labels.map((name) => Object.values(LABELS).find((l) => l.name === name)!),
    state: 'open',
    locked: false,
    assignee: null,
    assignees: [],
    milestone: null,
    comments,
    created_at: `2025-03-${String(20 - k * 2).padStart(2, '0')}T0${k}:14:52Z`,
    updated_at: `2025-03-${String(21 - k).padStart(2, '0')}T1${k}:02:11Z`,
    closed_at: null,
    author_association: 'MEMBER',
    active_lock_reason: null,
    body,
    reactions: { total_count: comments % 4, '+1': comments % 4, '-1': 0, laugh: 0, hooray: 0, confused: 0, heart: 0, rocket: 0, eyes: 0 },
    state_reason: null,
  }));
}
