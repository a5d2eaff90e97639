// What Gemini's generateContent refuses with a 400, checked on every Gemini body the gateway emits
// in tests: content roles and part shapes (one data field per part), function calls only in model
// contents and responses only in user contents, each call turn answered by the next content with
// as many function responses (of the same names), unique declared function names, and no tools,
// toolConfig or systemInstruction beside `cachedContent`. Violations are sentences naming the index.
import { isObject } from '@context-guru/components';

type Obj = Record<string, unknown>;

/** A part carries exactly one of these (the API's `data` oneof). */
const DATA = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult'];
const NAME_RE = /^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$/;

function checkCall(fc: unknown, role: string, at: string, out: string[]): void {
  if (role !== 'model') out.push(`${at}: functionCall outside a model content`);
  if (!isObject(fc) || typeof fc.name !== 'string' || fc.name === '') out.push(`${at}: functionCall without a name`);
  else if (fc.args !== undefined && !isObject(fc.args)) out.push(`${at}: functionCall args must be an object`);
}

function checkResponse(fr: unknown, role: string, at: string, out: string[]): void {
  if (role !== 'user') out.push(`${at}: functionResponse outside a user content`);
  if (!isObject(fr) || typeof fr.name !== 'string' || fr.name === '') out.push(`${at}: functionResponse without a name`);
  else if (!isObject(fr.response)) out.push(`${at}: functionResponse response must be an object`);
}

function checkPart(part: unknown, role: string, at: string, out: string[]): void {
  if (!isObject(part)) return void out.push(`${at}: not an object`);
  const data = DATA.filter((k) => part[k] !== undefined);
  if (data.length > 1) out.push(`${at}: one part carries ${data.join(' and ')} (at most one data field)`);
  if (data.length === 0 && part.thoughtSignature === undefined) out.push(`${at}: part without data`);
  if (part.text !== undefined && typeof part.text !== 'string') out.push(`${at}: text must be a string`);
  if (part.thoughtSignature !== undefined && typeof part.thoughtSignature !== 'string')
    out.push(`${at}: thoughtSignature must be a string`);
  if (part.functionCall !== undefined) checkCall(part.functionCall, role, at, out);
  if (part.functionResponse !== undefined) checkResponse(part.functionResponse, role, at, out);
}

const namesOf = (parts: unknown[], key: 'functionCall' | 'functionResponse'): string[] =>
  parts.flatMap((p) => (isObject(p) && isObject(p[key]) ? [String(p[key].name)] : []));

const sameNames = (a: string[], b: string[]): boolean => a.length === b.length && [...a].sort().join('\0') === [...b].sort().join('\0');

function checkContents(contents: unknown[], out: string[]): void {
  if (contents.length === 0) return void out.push('contents: empty');
  let calls: string[] = [];
  let callAt = -1;
  contents.forEach((c, i) => {
    const at = `contents[${i}]`;
    if (!isObject(c)) return void out.push(`${at}: not an object`);
    const role = c.role === undefined ? 'user' : c.role;
    if (role !== 'user' && role !== 'model') return void out.push(`${at}: invalid role ${JSON.stringify(c.role)}`);
    if (!Array.isArray(c.parts) || c.parts.length === 0) return void out.push(`${at}: parts must be a non-empty array`);
    c.parts.forEach((p, k) => checkPart(p, role, `${at}.parts[${k}]`, out));
    const answers = namesOf(c.parts, 'functionResponse');
    if (calls.length && !sameNames(calls, answers))
      out.push(`contents[${callAt}]: ${calls.length} function calls answered by ${answers.length} function responses in ${at}`);
    else if (!calls.length && answers.length) out.push(`${at}: function responses that answer no function call turn before them`);
    calls = role === 'model' ? namesOf(c.parts, 'functionCall') : [];
    callAt = i;
    if (calls.length && i === 0) out.push(`${at}: a function call turn must follow a user turn`);
  });
  if (calls.length) out.push(`contents[${callAt}]: ${calls.length} function calls without function responses after them`);
}

function checkTools(tools: unknown, out: string[]): void {
  if (tools === undefined) return;
  if (!Array.isArray(tools)) return void out.push('tools: must be an array');
  const names = new Set<string>();
  tools.forEach((t, i) => {
    if (!isObject(t)) return void out.push(`tools[${i}]: not an object`);
    const declared = t.functionDeclarations;
    if (declared === undefined) return;
    if (!Array.isArray(declared)) return void out.push(`tools[${i}].functionDeclarations: must be an array`);
    declared.forEach((d, k) => {
      const at = `tools[${i}].functionDeclarations[${k}]`;
      if (!isObject(d) || typeof d.name !== 'string' || !NAME_RE.test(d.name)) return void out.push(`${at}: invalid function name`);
      if (names.has(d.name)) out.push(`${at}: duplicate function name "${d.name}"`);
      names.add(d.name);
      if (d.parameters !== undefined && !isObject(d.parameters)) out.push(`${at} "${d.name}": parameters must be an object`);
    });
  });
}

function checkSystem(system: unknown, out: string[]): void {
  if (system === undefined) return;
  if (!isObject(system) || !Array.isArray(system.parts) || !system.parts.every((p) => isObject(p) && typeof p.text === 'string'))
    out.push('systemInstruction: must be a content whose parts are text');
}

export function validateGemini(body: Obj): string[] {
  const out: string[] = [];
  if (!Array.isArray(body.contents)) return ['contents: missing or not an array'];
  checkContents(body.contents, out);
  checkTools(body.tools, out);
  checkSystem(body.systemInstruction, out);
  if (body.cachedContent !== undefined) {
    for (const key of ['tools', 'toolConfig', 'systemInstruction'])
      if (body[key] !== undefined) out.push(`${key}: not allowed beside cachedContent (the cached content fixes it)`);
  }
  return out;
}
