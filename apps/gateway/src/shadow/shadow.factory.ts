// Wires shadow evaluation for one gateway process: the ledger (metrics and /stats), the pressure
// probe over the compression gate, the runner the request path offers to, and — with a durable
// store — the flush that sums every replica's figures in shadow_tallies.
import type { SqlClient } from '@context-guru/storage';
import { type Logger } from '@context-guru/engine';
import type { GatewayMetrics } from '../observability/metrics';
import type { CompressionGate } from '../http/compression-gate';
import { ShadowFlush } from './shadow-flush';
import { ShadowLedger } from './shadow-ledger';
import { GatewayPressure, type Pressure } from './shadow-pressure';
import { ShadowRunner } from './shadow-runner';

export interface Shadow {
  runner: ShadowRunner;
  ledger: ShadowLedger;
  /** Absent without a durable store: the figures stay this replica's (/stats, /metrics). */
  flush?: ShadowFlush;
  close(): Promise<void>;
}

export function createShadow(o: {
  gate: CompressionGate;
  metrics: GatewayMetrics;
  log: Logger;
  sql?: SqlClient;
  pressure?: Pressure;
}): Shadow {
  const ledger = new ShadowLedger(o.metrics);
  const pressure = o.pressure ?? new GatewayPressure(o.gate);
  const runner = new ShadowRunner({ ledger, pressure, log: o.log });
  const flush = o.sql ? new ShadowFlush({ sql: o.sql, ledger, log: o.log }) : undefined;
  flush?.start();
  return {
    runner,
    ledger,
    flush,
    async close() {
      await runner.close();
      pressure.close();
      await flush?.close();
    },
  };
}
