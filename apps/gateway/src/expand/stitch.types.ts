// What the stream stitcher asks of a dialect: rewrite each upstream event for the one message the
// client sees (withholding expand calls), rebuild the round's whole turn, and close the message.
import { type SseEvent, type JsonObject, type Usage } from '@context-guru/engine';

export interface DialectStitch {
  /** The client's bytes for one upstream event of the current round ('' = held back or dropped). */
  event(ev: SseEvent, raw: string): string;
  /** The round's whole response, as the non-streaming API would have answered (null = unrebuildable). */
  turn(): JsonObject | null;
  /** Expand calls withheld from the client in the current round. */
  readonly withheld: number;
  /** Client tool calls relayed in the current round. */
  readonly clientCalls: number;
  /** The upstream sent an error event (relayed): the message cannot be continued. */
  readonly errored: boolean;
  /** Usage of every round so far, summed. */
  usage(): Usage | null;
  /** Starts relaying a continuation as more of the same message. */
  nextRound(): void;
  /**
   * The closing events (stop reason and usage of the whole message). `dangling`: expand calls were
   * withheld and will not be answered, so a tool-use stop must not tell the client to run a tool.
   */
  close(dangling: boolean): string;
  /** An error event in this dialect's shape, for a continuation that failed after bytes were sent. */
  error(status: number, body: string): string;
}
