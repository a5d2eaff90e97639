// The billing replay's fidelity check: a needle is kept when the forwarded request shows it or a
// forwarded marker's original holds it (then counted as one expand away), lost otherwise; a marker is exact only when the stash
// holds the original its id names; a forwarded body the provider would reject is counted.
import { marker, stashId } from '@context-guru/components';
import { FidelityCheck } from '../../../bench/fidelity-check';

const NEEDLE = 'if(ast_id(case_expr) == TK_DONTCAREREF)';
const LOG = `line 1\n    ${NEEDLE}\nline 3`;
const body = (toolOutput: string) => ({
  model: 'gpt-x',
  messages: [
    { role: 'user', content: 'fix it' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: toolOutput },
  ],
});

describe('FidelityCheck', () => {
  it('keeps a needle that stays visible (whitespace folded) or sits in a marker’s original', async () => {
    const stash = new Map([[stashId(LOG), LOG]]);
    const check = new FidelityCheck('openai', [NEEDLE, 'never asked'], async (id) => stash.get(id) ?? null);
    await check.turn(body(LOG), body(LOG.replace('    ', ' ')));
    await check.turn(body(LOG), body(`3 lines ${marker(stashId(LOG))}`));
    // The second turn held it only inside the marker's original: one expand away.
    expect(check.result()).toEqual({
      needles: 1,
      needlesLost: 0,
      needlesBehindMarker: 1,
      markers: 1,
      markersInexact: 0,
      invalidRequests: 0,
    });
  });

  it('counts a needle removed without a marker as lost, and a marker without its original as inexact', async () => {
    const check = new FidelityCheck('openai', [NEEDLE], async (id) => (id === 'abcdef0123456789' ? 'another text' : null));
    await check.turn(body(LOG), body('3 lines elided'));
    await check.turn(body(LOG), body(`${marker('abcdef0123456789')} ${marker('0000000000000000')}`));
    expect(check.result()).toMatchObject({ needles: 1, needlesLost: 1, needlesBehindMarker: 0, markers: 2, markersInexact: 2 });
  });

  it('counts a forwarded request the provider would reject', async () => {
    const check = new FidelityCheck('openai', [], async () => null);
    const orphan = body('ok');
    orphan.messages.splice(1, 1);
    await check.turn(body('ok'), orphan);
    expect(check.result()).toMatchObject({ invalidRequests: 1, firstInvalid: expect.stringContaining('messages[') });
  });
});
