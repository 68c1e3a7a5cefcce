// Text-only upstreams with the real npm clients: openai (openai-node) and the
// Vercel AI SDK (`ai` + `@ai-sdk/openai-compatible`) run a tool loop through
// the Envoy stand-in and toolproc (shape: text_only) against an upstream that
// reads and writes only text (testenv.TextOnlyModel). Normally run by
// `go test ./testenv -run NodeTextOnly`, which starts the environment.
//
// Env:
//   TOOLPROC_TEXTONLY_URL  stand-in URL, e.g. http://127.0.0.1:10000 (required)

import { test } from 'node:test';
import assert from 'node:assert/strict';

import OpenAI from 'openai';
import { jsonSchema, stepCountIs, streamText, generateText, tool } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';

globalThis.AI_SDK_LOG_WARNINGS = false;

const BASE = (process.env.TOOLPROC_TEXTONLY_URL ?? '').replace(/\/+$/, '');
const MODEL = 'text-only-1';
const WANT = ['get_weather=sunny 21C in Paris', 'get_weather=sunny 21C in Rome', 'get_time=14:05 in Europe/Rome'];

function runTool(name, args) {
  if (name === 'get_weather') return `sunny 21C in ${args.city}`;
  if (name === 'get_time') return `14:05 in ${args.zone}`;
  return `unknown tool ${name}`;
}

const openaiTools = [
  { type: 'function', function: { name: 'get_weather', description: 'Current weather of a city.',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } },
  { type: 'function', function: { name: 'get_time', description: 'Local time in a time zone.',
    parameters: { type: 'object', properties: { zone: { type: 'string' } }, required: ['zone'] } } },
];

function checkFinal(final) {
  for (const w of WANT) assert.ok(final.includes(w), `final answer ${JSON.stringify(final)} lacks ${w}`);
  assert.ok(!final.includes('<invoke'), `the client saw <invoke> text: ${final}`);
}

for (const stream of [false, true]) {
  test(`openai tool loop, stream=${stream}`, async () => {
    assert.ok(BASE, 'TOOLPROC_TEXTONLY_URL is required');
    const client = new OpenAI({ baseURL: `${BASE}/v1`, apiKey: 'sk-text-only-node', maxRetries: 0 });
    const messages = [
      { role: 'system', content: 'You are a weather agent.' },
      { role: 'user', content: 'Weather in Paris and Rome, and the time in Rome?' },
    ];
    for (let turn = 1; turn <= 5; turn++) {
      let msg;
      if (stream) {
        const runner = client.chat.completions.stream({ model: MODEL, messages, tools: openaiTools });
        const done = await runner.finalChatCompletion();
        msg = done.choices[0].message;
      } else {
        const done = await client.chat.completions.create({ model: MODEL, messages, tools: openaiTools });
        msg = done.choices[0].message;
      }
      if (!msg.tool_calls?.length) {
        checkFinal(msg.content ?? '');
        assert.equal(turn, 3);
        return;
      }
      if (turn === 2) assert.equal(msg.tool_calls.length, 2);
      messages.push({ role: 'assistant', content: msg.content ?? null, tool_calls: msg.tool_calls });
      for (const c of msg.tool_calls) {
        assert.match(c.id, /^call_/);
        messages.push({ role: 'tool', tool_call_id: c.id, content: runTool(c.function.name, JSON.parse(c.function.arguments)) });
      }
    }
    assert.fail('no final answer after 5 turns');
  });

  test(`ai tool loop, stream=${stream}`, async () => {
    assert.ok(BASE, 'TOOLPROC_TEXTONLY_URL is required');
    const provider = createOpenAICompatible({ name: 'toolproc', baseURL: `${BASE}/v1`, apiKey: 'sk-text-only-ai' });
    const tools = {
      get_weather: tool({ description: 'Current weather of a city.',
        inputSchema: jsonSchema({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
        execute: async (args) => runTool('get_weather', args) }),
      get_time: tool({ description: 'Local time in a time zone.',
        inputSchema: jsonSchema({ type: 'object', properties: { zone: { type: 'string' } }, required: ['zone'] }),
        execute: async (args) => runTool('get_time', args) }),
    };
    const opts = {
      model: provider(MODEL), system: 'You are a weather agent.',
      prompt: 'Weather in Paris and Rome, and the time in Rome?',
      tools, maxRetries: 0, stopWhen: stepCountIs(5),
    };
    let text;
    let steps;
    if (stream) {
      const result = streamText({ ...opts, onError: () => {} });
      text = await result.text;
      steps = await result.steps;
    } else {
      const result = await generateText(opts);
      text = result.text;
      steps = result.steps;
    }
    checkFinal(text);
    assert.equal(steps.length, 3);
  });
}
