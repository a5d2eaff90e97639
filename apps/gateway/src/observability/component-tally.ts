// Each component's per-request figures (runs by outcome, gate declines, saved tokens, time), kept
// as plain numbers on the request path and added to their prom-client counters when those are
// read (a /metrics scrape). Recording them directly made about five labelled increments per
// component and request (label validation and hashing each): ≈ 15 µs of every agent request.
import type { Report } from '@context-guru/components';
import type { Counter } from 'prom-client';

interface Tally {
  ran: number;
  mutated: number;
  acted: number;
  reverted: number;
  saved: number;
  seconds: number;
  gates: Map<string, number>;
}

export interface ComponentCounters {
  componentRuns: Counter<'component' | 'outcome'>;
  componentGateDeclines: Counter<'component' | 'gate'>;
  componentSavedTokens: Counter<'component'>;
  componentDuration: Counter<'component'>;
}

const OUTCOMES = ['ran', 'mutated', 'acted', 'reverted'] as const;

export class ComponentTallies {
  private readonly byName = new Map<string, Tally>();

  /** One component's run in a finished request (what recordRequest used to add to the counters). */
  add(rep: Report): void {
    const t = this.tally(rep.component);
    t.ran++;
    if (rep.reverted) t.reverted++;
    else if (rep.changed.length) {
      t.mutated++;
      if (rep.tokensAfter < rep.tokensBefore) t.acted++;
    }
    for (const [gate, n] of Object.entries(rep.gates)) t.gates.set(gate, (t.gates.get(gate) ?? 0) + n);
    if (!rep.reverted) t.saved += Math.max(0, rep.tokensBefore - rep.tokensAfter);
    t.seconds += rep.durationMs / 1000;
  }

  /** Adds what accumulated since the last fold to the counters and starts again from zero. */
  fold(c: ComponentCounters): void {
    for (const [component, t] of this.byName) {
      for (const outcome of OUTCOMES) {
        if (t[outcome]) c.componentRuns.inc({ component, outcome }, t[outcome]);
        t[outcome] = 0;
      }
      // A gate reported at 0 still creates its series (as an increment by 0 did).
      for (const [gate, n] of t.gates) c.componentGateDeclines.inc({ component, gate }, n);
      t.gates.clear();
      c.componentSavedTokens.inc({ component }, t.saved);
      c.componentDuration.inc({ component }, t.seconds);
      t.saved = 0;
      t.seconds = 0;
    }
  }

  private tally(component: string): Tally {
    let t = this.byName.get(component);
    if (!t) {
      t = { ran: 0, mutated: 0, acted: 0, reverted: 0, saved: 0, seconds: 0, gates: new Map() };
      this.byName.set(component, t);
    }
    return t;
  }
}
