import { REGISTRY, findDefinition, Pipeline } from '@context-guru/components';
import { testCtx } from '../../support/ctx';
import { fixtureComponents, loadFixtureCases } from '../../support/fixtures';

describe('component fixture folders', () => {
  for (const component of fixtureComponents()) {
    describe(component, () => {
      for (const c of loadFixtureCases(component)) {
        it(`${c.name}`, async () => {
          const def = findDefinition(component);
          expect(def).toBeDefined();
          const instance = def!.create(def!.options(c.config, `components.${component}`));
          const ctx = testCtx({
            provider: c.input.provider,
            cache: c.input.cache,
            existingBreakpoints: c.input.existingBreakpoints,
            snapshot: {
              frozen: new Map(Object.entries(c.input.frozen ?? {})),
              lost: new Set(c.input.lost ?? []),
              kept: new Set(c.input.kept ?? []),
            },
          });
          const result = await new Pipeline([instance]).run(c.input.messages, ctx);
          const report = result.reports[0]!;
          expect(report.error).toBeUndefined();
          expect(result.messages).toEqual(c.output.messages);
          // Every fixture states its gates and its key count: an unstated expectation cannot fail.
          expect(c.output.gates).toBeDefined();
          expect(c.output.keys).toBeDefined();
          expect(report.gates).toEqual(c.output.gates);
          expect(report.keys).toHaveLength(c.output.keys!);
          // A component reports only gates it declares (what /stats and /metrics list per component).
          for (const gate of Object.keys(report.gates)) expect(def!.gates).toContain(gate);
          // Every key the run returned must be stashed, so every marker it emitted resolves.
          for (const key of report.keys) expect(ctx.stash.entries.has(key)).toBe(true);
        });
      }
    });
  }

  it('every registered component has a fixture folder', () => {
    const have = new Set(fixtureComponents());
    expect(REGISTRY.map((d) => d.name).filter((n) => !have.has(n))).toEqual([]);
  });
});
