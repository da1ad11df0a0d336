// The AI SDK side of scripts/check-wire-clients.py: reads one of cstream's
// Responses or Messages outputs through the AI SDK's own providers and says
// what they rebuilt.
//
// One request per stdin line, one JSON answer per stdout line, so one Node
// process serves the whole run:
//   {"family": "anthropic"|"responses", "base": URL, "how": "stream"|"generate",
//    "tools": [names]}
// `stream` is `streamText` (fullStream), `generate` is `generateText`. The
// answer: {text: [per text part], reasoning, calls: [[id, name, input]],
// finish, usage: {input, output} | null, error: message | null}.
//
// Usage: node read.mjs NODE_MODULES_PARENT   (the folder `npm ci` ran in)

import { createInterface } from 'node:readline';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

// The SDK's warnings (an unknown model name) would go to stdout.
globalThis.AI_SDK_LOG_WARNINGS = false;

const req = createRequire(`${process.argv[2] || process.cwd()}/`);
const load = async name => import(pathToFileURL(req.resolve(name)).href);
const { streamText, generateText, tool, jsonSchema } = await load('ai');
const { createOpenAI } = await load('@ai-sdk/openai');
const { createAnthropic } = await load('@ai-sdk/anthropic');
const version = name => req(req.resolve(`${name}/package.json`)).version;

function model(family, base) {
  if (family === 'anthropic') {
    return createAnthropic({ baseURL: `${base}/v1`, apiKey: 'x' })('x');
  }
  return createOpenAI({ baseURL: `${base}/v1`, apiKey: 'x' }).responses('x');
}

// The calls' tools must be declared for tool-call parts to come out; none has
// `execute`, so nothing is run. Any input is accepted as it is.
function tools(names) {
  if (!names.length) return undefined;
  return Object.fromEntries(names.map(n => [n, tool({ description: n, inputSchema: jsonSchema({}) })]));
}

function usage(u) {
  return u && u.inputTokens !== undefined ? { input: u.inputTokens, output: u.outputTokens } : null;
}

function message(e) {
  return String(e?.message ?? e?.error?.message ?? JSON.stringify(e));
}

async function stream(r) {
  const out = { text: [], reasoning: '', calls: [], finish: null, usage: null, error: null };
  const texts = new Map();
  const errors = [];
  const result = streamText({
    model: model(r.family, r.base),
    prompt: 'hi',
    tools: tools(r.tools),
    maxRetries: 0,
    maxOutputTokens: 1024,
    onError: () => {},
  });
  for await (const part of result.fullStream) {
    switch (part.type) {
      case 'text-delta':
        texts.set(part.id, (texts.get(part.id) ?? '') + part.text);
        break;
      case 'reasoning-delta':
        out.reasoning += part.text;
        break;
      case 'tool-call':
        out.calls.push([part.toolCallId, part.toolName, part.input]);
        break;
      case 'error':
        errors.push(message(part.error));
        break;
      case 'finish':
        out.finish = part.finishReason;
        out.usage = usage(part.totalUsage);
        break;
    }
  }
  out.text = [...texts.values()];
  if (errors.length) out.error = errors.join('; ');
  return out;
}

async function generate(r) {
  const out = { text: [], reasoning: '', calls: [], finish: null, usage: null, error: null };
  try {
    const g = await generateText({ model: model(r.family, r.base), prompt: 'hi', tools: tools(r.tools), maxRetries: 0, maxOutputTokens: 1024 });
    for (const p of g.content) {
      if (p.type === 'text') out.text.push(p.text);
      else if (p.type === 'reasoning') out.reasoning += p.text;
      else if (p.type === 'tool-call') out.calls.push([p.toolCallId, p.toolName, p.input]);
    }
    out.finish = g.finishReason;
    out.usage = usage(g.usage);
  } catch (e) {
    out.error = `${e.name}: ${message(e)}`;
  }
  return out;
}

// Answers start with this, so a stray line on stdout cannot be taken for one.
const ANSWER = 'answer: ';
process.stdout.write(
  ANSWER + JSON.stringify({ versions: { ai: version('ai'), '@ai-sdk/openai': version('@ai-sdk/openai'), '@ai-sdk/anthropic': version('@ai-sdk/anthropic') } }) + '\n',
);
for await (const line of createInterface({ input: process.stdin })) {
  const r = JSON.parse(line);
  let out;
  try {
    out = r.how === 'generate' ? await generate(r) : await stream(r);
  } catch (e) {
    out = { crashed: `${e.name}: ${message(e)}` };
  }
  process.stdout.write(`${ANSWER}${JSON.stringify(out)}\n`);
}
