// A real OTLP/HTTP trace receiver in the test process: accepts POST /v1/traces with JSON bodies
// (what @opentelemetry/exporter-trace-otlp-http sends) and keeps every span, flattened, with its
// attributes decoded from OTLP's typed values. Protobuf bodies are refused (415) so a test notices.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

type AttrValue = string | number | boolean | AttrValue[];

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, AttrValue>;
  status: { code?: number; message?: string };
  resource: Record<string, AttrValue>;
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Raw request bodies, to check that no message content ever left the gateway. */
  bodies: string[];
  close(): Promise<void>;
}

interface OtlpAnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpAnyValue[] };
}
interface OtlpKeyValue {
  key: string;
  value: OtlpAnyValue;
}

function decodeValue(v: OtlpAnyValue): AttrValue {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(decodeValue);
  return '';
}

function decodeAttributes(list: OtlpKeyValue[] | undefined): Record<string, AttrValue> {
  const out: Record<string, AttrValue> = {};
  for (const kv of list ?? []) out[kv.key] = decodeValue(kv.value);
  return out;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
      if (!(req.headers['content-type'] ?? '').includes('json')) return void res.writeHead(415).end();
      const text = Buffer.concat(chunks).toString('utf8');
      bodies.push(text);
      const doc = JSON.parse(text) as {
        resourceSpans?: Array<{
          resource?: { attributes?: OtlpKeyValue[] };
          scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }>;
        }>;
      };
      for (const rs of doc.resourceSpans ?? []) {
        const resource = decodeAttributes(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              traceId: String(s.traceId),
              spanId: String(s.spanId),
              parentSpanId: String(s.parentSpanId ?? ''),
              name: String(s.name),
              kind: Number(s.kind),
              startNs: BigInt(String(s.startTimeUnixNano)),
              endNs: BigInt(String(s.endTimeUnixNano)),
              attributes: decodeAttributes(s.attributes as OtlpKeyValue[]),
              status: (s.status ?? {}) as ReceivedSpan['status'],
              resource,
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The children of a span, in start order. */
export function childrenOf(spans: readonly ReceivedSpan[], parent: ReceivedSpan): ReceivedSpan[] {
  return spans
    .filter((s) => s.parentSpanId === parent.spanId && s.traceId === parent.traceId)
    .sort((a, b) => (a.startNs < b.startNs ? -1 : a.startNs > b.startNs ? 1 : 0));
}
