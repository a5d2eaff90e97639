// The embedded single process (`npm start`): gateway and admin on ONE set of stores — the PGlite
// under DATA_DIR has a single session, so both must share its client — and one in-process
// generation bus: the admin announces on it, the gateway's tenancy listens. Neither app imports
// the other; this file is the only place that knows both.
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createAdminServer, type GatewayStatsSource } from '@context-guru/admin';
import {
  createGatewayContext,
  createGatewayServer,
  listenGateway,
  statsDocument,
  type Env,
  type GatewayContext,
} from '@context-guru/gateway';
import {
  InProcessGenerationBus,
  RedisGenerationPublisher,
  auditSealing,
  fanOut,
  sealAuditChain,
  type GenerationNotifier,
} from '@context-guru/storage';

export interface Embedded {
  gw: GatewayContext;
  gatewayUrl: string;
  adminUrl: string;
  bus: InProcessGenerationBus;
  /** ADMIN_TOKEN, or one generated at boot when it is not set (the page's URL carries it). */
  adminToken: string;
  adminTokenGenerated: boolean;
  /** The built-in savings page, with the token in the fragment (never sent to a server). */
  uiUrl: string;
  close(): Promise<void>;
}

/** The gateway's in-process figures as the admin's /v1/stats reads them. */
function statsSource(gw: GatewayContext): GatewayStatsSource {
  return {
    tenants: () => gw.stats.tenants(),
    snapshot: (tenant) => statsDocument(gw, tenant, true),
    minutes: (tenant) => gw.stats.timeline.minutes(tenant),
    recentSessions: () => gw.stats.timeline.recentSessions(),
  };
}

const urlOf = (addr: AddressInfo | string | null) =>
  typeof addr === 'object' && addr ? `http://${addr.address}:${addr.port}` : String(addr);

export async function startEmbedded(env: Env): Promise<Embedded> {
  const bus = new InProcessGenerationBus();
  const gw = await createGatewayContext(env, { generations: bus });
  const closers: Array<() => Promise<void>> = [];
  try {
    const gateway = await createGatewayServer(gw);
    await listenGateway(gateway, env.port, env.host);
    closers.push(() => gateway.close());
    if (!gw.durable) throw new Error('the embedded admin needs a durable store (DURABLE_STORE=none leaves it nowhere to keep tenants)');
    // With Redis configured, other gateway processes may share this control plane: announce there too.
    const publisher = env.redisUrl
      ? await RedisGenerationPublisher.connect({ url: env.redisUrl, prefix: env.redisPrefix, log: gw.log })
      : undefined;
    if (publisher) closers.push(() => publisher.close());
    const notifier: GenerationNotifier = publisher ? fanOut(bus, publisher) : bus;
    // Without ADMIN_TOKEN the control plane would be locked: the laptop default gets a random one
    // instead, printed once as the page's URL (as notebook servers do), so only its reader gets in.
    const adminToken = env.adminToken ?? randomBytes(24).toString('base64url');
    const audit = gw.keys && auditSealing(gw.keys, gw.durable.sql, env, sealAuditChain);
    if (audit) closers.push(() => Promise.resolve(audit.close()));
    const admin = await createAdminServer({
      sql: gw.durable.sql,
      audit,
      store: gw.store,
      notifier,
      adminToken,
      authFailuresPerMinute: env.adminAuthFailuresPerMinute,
      schema: () => gw.schema(),
      log: gw.log,
      gatewayStats: statsSource(gw),
    });
    await admin.listen(env.adminPort, env.host);
    closers.unshift(() => admin.close());
    gw.log.info('gateway and admin listening', { port: env.port, adminPort: env.adminPort, host: env.host });
    const adminUrl = urlOf(admin.getHttpServer().address());
    return {
      gw,
      bus,
      adminToken,
      adminTokenGenerated: env.adminToken === undefined,
      uiUrl: `${adminUrl}/ui/#token=${encodeURIComponent(adminToken)}`,
      gatewayUrl: urlOf(gateway.getHttpServer().address()),
      adminUrl,
      async close() {
        for (const close of closers) await close().catch(() => undefined);
        await gw.close().catch(() => undefined);
      },
    };
  } catch (err) {
    for (const close of closers) await close().catch(() => undefined);
    await gw.close().catch(() => undefined);
    throw err;
  }
}
