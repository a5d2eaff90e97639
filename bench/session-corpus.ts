// The sessions bench's corpus: whole agent sessions, each as the request bodies an agent sends turn
// by turn (every turn the previous body plus what is new), in both dialects. Real sessions (the
// vendored OpenHands / SWE-agent transcripts, bench/corpus-real) and generated ones (agent sessions over real files,
// the real command outputs, the billing trajectories with parallel calls and pretty JSON).
import { agentSteps, anthropicTurn, openaiTurn, type AgentStep } from '../test/support/transcripts';
import { fixtureCommandSteps } from './corpus';
import { realCorpus, realRequest } from './real-corpus';
import { anthropicTrajectoryBody, openaiTrajectoryBody, trajectories } from './trajectories';
import { type Dialect } from '@context-guru/engine';

export interface ReplayedSession {
  name: string;
  dialect: Dialect;
  /** Turn t's request body, in the order an agent sends them. */
  bodies: string[];
}

/** Each vendored real session in both dialects, as its harness sent it (Anthropic with Claude Code's moving breakpoint). */
function realSessions(): ReplayedSession[] {
  return realCorpus().flatMap((session) =>
    (['openai', 'anthropic'] as const).map((dialect) => ({
      name: `${session.id} (${dialect})`,
      dialect,
      bodies: session.formats[dialect].requestEnds.map((_, t) => JSON.stringify(realRequest(session, dialect, t + 1))),
    })),
  );
}

function stepSessions(name: string, steps: AgentStep[]): ReplayedSession[] {
  const turns = Array.from({ length: steps.length }, (_, t) => t + 1);
  return [
    { name: `${name} (openai)`, dialect: 'openai', bodies: turns.map((t) => JSON.stringify(openaiTurn(steps, t))) },
    { name: `${name} (anthropic)`, dialect: 'anthropic', bodies: turns.map((t) => JSON.stringify(anthropicTurn(steps, t))) },
  ];
}

export function sessionCorpus(): ReplayedSession[] {
  const generated = [3, 7, 11, 19].flatMap((seed) => stepSessions(`agent-seed-${seed}`, agentSteps(24, seed)));
  const commands = stepSessions('command-outputs', fixtureCommandSteps().slice(0, 30));
  const parallel = trajectories().flatMap((tr) => {
    const turns = Array.from({ length: tr.rounds.length }, (_, t) => t + 1);
    return [
      { name: `${tr.name} (openai)`, dialect: 'openai' as const, bodies: turns.map((t) => JSON.stringify(openaiTrajectoryBody(tr, t))) },
      {
        name: `${tr.name} (anthropic)`,
        dialect: 'anthropic' as const,
        bodies: turns.map((t) => JSON.stringify(anthropicTrajectoryBody(tr, t))),
      },
    ];
  });
  return [...realSessions(), ...generated, ...commands, ...parallel];
}
