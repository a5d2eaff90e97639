// Where the expand tool goes in a Gemini body: a function declaration appended last to the last
// tool that declares functions, or a tool of its own when the body has no tools at all. A body
// whose tools are only built-ins (googleSearch, codeExecution, urlContext…) is left without it:
// not every model takes function declarations beside a built-in, and a refused request is worse
// than an unexpandable marker (the pipeline then emits none: the tool is not on offer).
import { isObject } from '@context-guru/components';
import { expandToolJson } from './expand-tool';
import { elements, member } from './text-scan';
import type { Edit, WireView } from './wire.types';

export function geminiInjection(view: WireView): Edit | null {
  const declaration = expandToolJson('gemini');
  const tools = view.body.tools;
  const span = view.index.topLevel('tools');
  if (tools === undefined || !span) {
    const at = view.index.insertionPoint();
    return { start: at.at, end: at.at, text: `${at.comma ? ',' : ''}"tools":[{"functionDeclarations":[${declaration}]}]` };
  }
  if (!Array.isArray(tools) || view.text.charAt(span.start) !== '[') return null;
  const list = elements(view.text, span.start);
  for (let k = tools.length - 1; k >= 0; k--) {
    const tool: unknown = tools[k];
    const el = list[k];
    if (!isObject(tool) || !Array.isArray(tool.functionDeclarations) || !el) continue;
    const decl = member(view.text, el.start, 'functionDeclarations');
    if (!decl || view.text.charAt(decl.start) !== '[') return null;
    const last = elements(view.text, decl.start).at(-1);
    return last
      ? { start: last.end, end: last.end, text: `,${declaration}` }
      : { start: decl.start + 1, end: decl.start + 1, text: declaration };
  }
  return list.length === 0 ? { start: span.start + 1, end: span.start + 1, text: `{"functionDeclarations":[${declaration}]}` } : null;
}
