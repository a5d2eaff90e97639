// Liveness, readiness, /stats and /metrics. Readiness means the stores answer, a config is
// loaded and the durable schema is not older than this build (app pods never migrate; the Helm
// Job does); liveness only that the process serves.
import { Controller, Get, Header, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { GATEWAY } from '../gateway.tokens';
import type { GatewayContext } from '../gateway-context';
import { cmdfilterLedgers } from './ledgers';

@Controller()
export class OpsController {
  constructor(@Inject(GATEWAY) private readonly gw: GatewayContext) {}

  @Get('healthz')
  @Header('content-type', 'text/plain')
  healthz(): string {
    return 'ok';
  }

  @Get('readyz')
  async readyz(@Res() reply: FastifyReply): Promise<void> {
    const tenants = this.gw.tenants.all();
    let store = 'ok';
    try {
      await this.gw.store.ping();
      this.gw.metrics.storeUp.set(1);
    } catch {
      store = 'unavailable';
      this.gw.metrics.storeUp.set(0);
    }
    const schema = await this.gw.schema().catch(() => ({ status: 'unavailable' as const }));
    const schemaReady = schema === undefined || ('ok' in schema && schema.ok);
    const ready = store === 'ok' && tenants.length > 0 && schemaReady;
    reply
      .code(ready ? 200 : 503)
      .header('content-type', 'application/json')
      .send({
        ready,
        store: { kind: this.gw.store.kind, status: store },
        ...(schema ? { schema } : {}),
        config: tenants.map((t) => ({ tenant: t.id, version: t.configVersion, pipeline: t.built.names })),
      });
  }

  @Get('stats')
  stats(): Record<string, unknown> {
    const health = this.gw.store.health();
    return this.gw.stats.snapshot({
      frozen_dropped: health.frozenDropped,
      frozen_repaired: health.frozenRepaired,
      frozen_flips: Math.max(0, health.frozenDropped - health.frozenRepaired),
      ...cmdfilterLedgers(),
      ...this.gw.models.spend.snapshot(),
    });
  }

  @Get('metrics')
  async metrics(@Res() reply: FastifyReply): Promise<void> {
    const health = this.gw.store.health();
    this.gw.metrics.frozenStore.set({ outcome: 'dropped' }, health.frozenDropped);
    this.gw.metrics.frozenStore.set({ outcome: 'repaired' }, health.frozenRepaired);
    this.gw.metrics.setLlmSpend(this.gw.models.spend.snapshot().llm_by_component);
    const body = await this.gw.metrics.registry.metrics();
    reply.code(200).header('content-type', this.gw.metrics.registry.contentType).send(body);
  }
}
