// Optional: read an OpenAI-compatible endpoint with the Vercel AI SDK
// (`ai` + `@ai-sdk/openai-compatible`, the provider opencode uses) and print
// what it rebuilt as one JSON object. Driven by check-openai-clients.py.
//
// Usage: node check-openai-clients.mjs BASE_URL [calls]
// The packages are loaded from $CSTREAM_NODE_MODULES/node_modules.

import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const base = process.argv[2];
const calls = process.argv[3] === 'calls';
const req = createRequire(`${process.env.CSTREAM_NODE_MODULES || process.cwd()}/`);
const load = async name => import(pathToFileURL(req.resolve(name)).href);
const { streamText, generateText, tool, jsonSchema } = await load('ai');
const { createOpenAICompatible } = await load('@ai-sdk/openai-compatible');
const version = req(req.resolve('@ai-sdk/openai-compatible/package.json')).version;

const provider = createOpenAICompatible({ name: 'cstream', baseURL: base, includeUsage: true });
const model = provider.chatModel('x');
// Tools must be declared for tool-call parts to appear; none has `execute`,
// so nothing is run again.
const anyArgs = jsonSchema({ type: 'object', additionalProperties: true });
const tools = calls
  ? Object.fromEntries(
      ['shell', 'read', 'write', 'edit', 'ls', 'grep', 'glob', 'mcp', 'apply_patch'].map(n => [
        n,
        tool({ description: n, inputSchema: anyArgs }),
      ]),
    )
  : undefined;

const res = { client: `ai-sdk openai-compatible ${version}`, content: '', reasoning: '', tool_calls: [] };
const errors = [];
const result = streamText({ model, prompt: 'hi', tools, maxRetries: 0, onError: () => {} });
for await (const part of result.fullStream) {
  switch (part.type) {
    case 'text-delta':
      res.content += part.text;
      break;
    case 'reasoning-delta':
      res.reasoning += part.text;
      break;
    case 'tool-call':
      res.tool_calls.push([part.toolCallId, part.toolName, part.input]);
      break;
    case 'error':
      errors.push(String(part.error?.message ?? part.error));
      break;
    case 'finish':
      res.finish = part.finishReason;
      if (part.totalUsage?.inputTokens !== undefined) {
        const u = part.totalUsage;
        res.usage = {
          inputTokens: u.inputTokens,
          cacheRead: u.inputTokenDetails?.cacheReadTokens,
          outputTokens: u.outputTokens,
          totalTokens: u.totalTokens,
        };
      }
      break;
  }
}
if (errors.length) res.error = errors.join('; ');
try {
  const g = await generateText({ model, prompt: 'hi', tools, maxRetries: 0 });
  res.json = `generateText ok: content ${g.text === res.content ? '==' : '!='} stream content, finish ${g.finishReason}, ${g.toolCalls.length} tool calls`;
} catch (e) {
  res.json = `${e.name}: ${e.message}`;
}
process.stdout.write(JSON.stringify(res));
