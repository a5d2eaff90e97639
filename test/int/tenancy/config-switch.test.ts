// A tenant's config changes twice in the middle of live sessions served by two replicas (agent-like
// masking → off → rollback to the masking version). The provider has cached what was forwarded
// under each version, so every message it already holds must come back byte-identical on every
// later turn — frozen decisions replay, whichever version made them — while the version active
// at each turn decides only what is new. Billed by the simulated provider prompt cache.
import type { ControlSeed } from '../../support/control-seed';
import { PromptCacheSim, cachingScript, canonicalMessages, headChanged, prefixBust, type BilledRequest } from '../../support/prompt-cache';
import type { Replica } from '../../support/replicas';
import { jsonScript } from '../../support/scripted-model';
import { postTurn, startTenantReplicas, waitGeneration, type TenantReplicas } from '../../support/tenant-replicas';
import { agentSteps, anthropicTurn, openaiTurn } from '../../support/transcripts';
import { REWRITE_HEADER } from '../../../apps/gateway/src/proxy/chat/respond.step';

jest.setTimeout(240_000);

const MASKING = { pipeline: ['format', 'dedup', 'mask', 'cacheinject'], components: { mask: { keep_recent: 2 } } };
const TURNS = 12;
const SWITCH_OFF = 5;
const ROLLBACK = 9;
/** Tool steps each turn adds: more than keep_recent, so the masking version acts in the tail. */
const PER_TURN = 3;
const MASKED = 'older tool output masked';

let rig: TenantReplicas | undefined;
let seed: ControlSeed;
let replicas: Replica[] = [];
const billed: BilledRequest[] = [];
let key = '';

beforeAll(async () => {
  rig = await startTenantReplicas({
    name: 'switch',
    script: cachingScript(new PromptCacheSim(), jsonScript({ expand: false }), billed),
    replicas: 2,
    // The blanket tail gate: the cache-read assertions below hold a switch to reading the whole
    // cached prefix, which a planned (priced) rewrite may re-bill on purpose (tested elsewhere).
    env: { REWRITE_PAYBACK_TURNS: '0' },
    seedWith: async (s) => {
      await s.createTenant('team', MASKING);
      key = (await s.issueKey('team')).key;
    },
  });
  ({ seed, replicas } = rig);
});

afterAll(() => rig?.close());

describe.each(['anthropic', 'openai'] as const)('%s: a preset switch mid-session on two replicas', (dialect) => {
  const steps = agentSteps(TURNS * PER_TURN, dialect === 'openai' ? 21 : 22);
  const sent: BilledRequest[] = [];
  const rewrites: Array<string | null> = [];

  beforeAll(async () => {
    const session = `switch-${dialect}`;
    for (let t = 1; t <= TURNS; t++) {
      if (t === SWITCH_OFF) {
        const { generation } = await seed.pushConfig('team', { preset: 'off' });
        await Promise.all(replicas.map((r) => waitGeneration(r, generation)));
      }
      if (t === ROLLBACK) {
        const generation = await seed.activateConfig('team', 1);
        await Promise.all(replicas.map((r) => waitGeneration(r, generation)));
      }
      const body = dialect === 'openai' ? openaiTurn(steps, t * PER_TURN) : anthropicTurn(steps, t * PER_TURN);
      const res = await postTurn(replicas[t % 2]!, dialect, body, { 'x-context-guru-key': key, 'x-context-guru-session': session });
      expect(res.status).toBe(200);
      rewrites.push(res.headers.get(REWRITE_HEADER));
      await res.text();
      sent.push(billed[billed.length - 1]!);
    }
  });

  it('never changes a message the provider already cached (zero busts), and the tools never change after the first offload', () => {
    // A change is a bust unless the turn announced a planned (priced) rewrite from exactly there.
    const busts = sent.slice(1).map((cur, i) => prefixBust(sent[i]!.body, cur.body));
    expect(busts.filter((b, i) => b >= 0 && rewrites[i + 1] !== `planned; from=${b}`)).toEqual([]);
    const firstOffload = sent.findIndex((s) => JSON.stringify(s.body).includes('context_guru_expand'));
    expect(firstOffload).toBeGreaterThanOrEqual(0);
    for (let t = firstOffload + 1; t < sent.length; t++)
      expect([t, headChanged(dialect, sent[t - 1]!.body, sent[t]!.body)]).toEqual([t, false]);
  });

  it('each version decides only the messages that are new under it', () => {
    const maskedAt = (t: number) => canonicalMessages(sent[t - 1]!.body).flatMap((m, i) => (m.includes(MASKED) ? [i] : []));
    // The masking version masked old outputs before the switch.
    const beforeSwitch = maskedAt(SWITCH_OFF - 1);
    expect(beforeSwitch.length).toBeGreaterThan(2);
    // Under `off`, nothing new is masked: the masked set is exactly what was cached at the switch.
    for (let t = SWITCH_OFF; t < ROLLBACK; t++) expect(maskedAt(t)).toEqual(beforeSwitch);
    // After the rollback the masking version governs the new tail again.
    expect(maskedAt(TURNS).length).toBeGreaterThan(beforeSwitch.length);
  });

  it('the provider read the cached prefix on the warm turns right after each switch', () => {
    // OpenAI caches every prefix automatically (Anthropic only at breakpoints, none in this transcript).
    if (dialect !== 'openai') return;
    for (const t of [SWITCH_OFF, SWITCH_OFF + 1, ROLLBACK, ROLLBACK + 1])
      expect([t, sent[t - 1]!.bill.cacheRead > sent[t - 2]!.bill.cacheRead]).toEqual([t, true]);
  });
});
