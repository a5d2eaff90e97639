// Liveness, readiness, /stats and /metrics. Readiness means the stores answered at boot (an
// outage since is reported as degraded, not as 503), a config is loaded, the durable schema is not older than this build (app pods never migrate; the Helm
// Job does) and the control plane's generation has been loaded once (a replica that cannot read
// it since keeps serving what it applied and names that generation as stale); liveness only that
// the process serves. /stats is the caller's own tenant's (its key, or `default` without one).
// The operator's views — /metrics, and /readyz's tenant list — answer only an ops caller
// (ops-access.ts): a bare /readyz says whether the replica is ready and why, naming no tenant.
import { Controller, Get, Header, Inject, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GATEWAY } from '../gateway.tokens';
import type { GatewayContext } from '../gateway-context';
import { statsDocument } from './stats-document';
import { setLlmSpend } from '../observability/metrics-record';
import { failureError } from '../http/request-errors';
import { gatewayError } from '../http/gateway-errors';
import { opsAllowed } from './ops-access';
import { TenantAuthError } from '../tenancy/tenant-resolver';

@Controller()
export class OpsController {
  constructor(@Inject(GATEWAY) private readonly gw: GatewayContext) {}

  @Get('healthz')
  @Header('content-type', 'text/plain')
  healthz(): string {
    return 'ok';
  }

  @Get('readyz')
  async readyz(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
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
    const control = this.gw.tenancy.sync?.status();
    // The stores answered at boot (it waits for them). An outage since is reported as degraded, not
    // turned into 503: every replica sees the same outage and keeps serving fail-open (docs/control-plane.md),
    // while a Kubernetes readiness probe failing on all of them would route no traffic at all.
    const ready = tenants.length > 0 && schemaReady && (control?.loaded ?? true);
    reply
      .code(ready ? 200 : 503)
      .header('content-type', 'application/json')
      .send({
        ready,
        ...(ready && store !== 'ok' ? { degraded: true } : {}),
        store: { kind: this.gw.store.kind, status: store },
        ...(schema ? { schema } : {}),
        ...(control ? { control: { replica: this.gw.tenancy.heartbeat?.id, ...control } } : {}),
        ...(opsAllowed(this.gw.env, req.headers) && {
          config: tenants.map((t) => ({
            tenant: t.id,
            version: t.configVersion,
            pipeline: t.built.names,
            ...(t.shadow ? { shadow: { version: t.shadow.version, sample: t.shadow.sample, pipeline: t.shadow.runtime.built.names } } : {}),
          })),
        }),
      });
  }

  @Get('stats')
  async stats(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    let tenant;
    try {
      tenant = this.gw.tenants.resolve(req.headers);
      const asked = (req.query as Record<string, string | undefined>).tenant;
      if (asked !== undefined && asked !== tenant.id)
        throw new TenantAuthError('tenant_forbidden', "a tenant key reads only its own tenant's stats");
    } catch (err) {
      const e = failureError('openai', err);
      reply.code(e.status).header('content-type', 'application/json').send(e.body);
      return;
    }
    reply
      .code(200)
      .header('content-type', 'application/json')
      .send(await statsDocument(this.gw, tenant.id, opsAllowed(this.gw.env, req.headers)));
  }

  @Get('metrics')
  async metrics(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    if (!opsAllowed(this.gw.env, req.headers)) {
      const message = this.gw.env.opsToken ? 'present OPS_TOKEN as a bearer token' : 'set OPS_TOKEN to serve /metrics beyond loopback';
      const e = gatewayError('openai', 'ops_auth', message);
      reply.code(e.status).header('content-type', 'application/json').send(e.body);
      return;
    }
    const health = this.gw.store.health();
    this.gw.metrics.frozenStore.set({ outcome: 'dropped' }, health.frozenDropped);
    this.gw.metrics.frozenStore.set({ outcome: 'repaired' }, health.frozenRepaired);
    setLlmSpend(this.gw.metrics, this.gw.models.spend.snapshot().llm_by_component);
    await this.gw.holdout.refreshGauges(this.gw.tenants.all());
    const body = await this.gw.metrics.registry.metrics();
    reply.code(200).header('content-type', this.gw.metrics.registry.contentType).send(body);
  }
}
