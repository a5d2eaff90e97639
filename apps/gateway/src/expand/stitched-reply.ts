// The client reply of a stream the gateway stitches itself (the Responses and Gemini loops): the
// body is written by `run` as the rounds go, and usage and rounds are known once it ends.
import { PassThrough } from 'node:stream';
import type { ClientReply, StreamOutcome } from '@context-guru/engine';

export function stitchedReply(
  status: number,
  headers: ClientReply['headers'],
  run: (out: PassThrough) => Promise<StreamOutcome>,
): ClientReply {
  const out = new PassThrough();
  const reply: ClientReply = {
    status,
    headers,
    body: out,
    mode: 'streamed',
    rounds: 0,
    usage: null,
    usageDone: Promise.resolve(null),
    streamDone: Promise.resolve({ usage: null, expandAfterStream: false, bytes: 0 }),
  };
  reply.streamDone = run(out).then((d) => {
    reply.usage = d.usage;
    reply.rounds = d.rounds ?? 0;
    return d;
  });
  reply.usageDone = reply.streamDone.then((d) => d.usage);
  return reply;
}
