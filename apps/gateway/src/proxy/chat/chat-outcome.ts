// What each step of a chat request decides, as a discriminated union the route switches on: go on
// (forward upstream, then answer the client with the provider's reply) or stop here with an error.
import type { Readable } from 'node:stream';
import { type ClientReply, type RequestReport, type Prepared } from '@context-guru/engine';
import type { GatewayErrorBody } from '../../http/gateway-errors';
import type { ClientAbort } from '../../http/upstream.client';

/** How a chat request ended: the outcome label of its metrics and trace. */
export type ChatEnd = 'ok' | 'client_abort' | 'upstream_error' | 'upstream_stream_error' | 'bad_request';

/** Send the prepared body upstream. */
export interface Forward {
  kind: 'forward';
  prepared: Prepared;
  /** Nothing was decoded (empty pipeline, or failed open): the inbound bytes go out as they came. */
  transparent: boolean;
  /** Transparent with a declared length: the body is streamed upstream as it arrives. */
  streamed: boolean;
  /** The body as received (empty while streamed: it is read on the way upstream). */
  inbound: Buffer;
  /** The inbound body as text ('' when transparent: never decoded). */
  raw: string;
  /** Gives back the body's place among those held whole (once the upstream answered; idempotent). */
  releaseBody: () => void;
}

/** The provider answered (after any expand rounds): relay that to the client. */
export interface Answered {
  kind: 'answered';
  result: ClientReply;
  report: RequestReport;
  abort: ClientAbort;
  /** Content keys of originals the model expanded: never reduced again (written as the reply goes out). */
  keptKeys: string[];
}

/** Stop here: answer the client with a gateway error (none when it has gone) and record the end. */
export interface Stop {
  kind: 'stop';
  end: ChatEnd;
  error: GatewayErrorBody | null;
  /** Recorded in stats, metrics and usage; null before anything was prepared (the trace alone ends). */
  report: RequestReport | null;
}

export function stop(end: ChatEnd, error: GatewayErrorBody | null, report: RequestReport | null): Stop {
  return { kind: 'stop', end, error, report };
}

/** The body of the first upstream call. */
export type OutgoingBody = string | Buffer | readonly Buffer[] | Readable;
