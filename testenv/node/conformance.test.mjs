// Stream conformance with the real npm clients: openai (openai-node) and the
// Vercel AI SDK (`ai` + `@ai-sdk/openai-compatible`) talk to toolproc through
// the Envoy stand-in, and each scenario's fake upstream answer must come out
// as what the scenario expects. See README.md; normally run by
// `go test ./testenv -run NodeClients`, which starts the environment.
//
// Env:
//   TOOLPROC_BASE_URL   stand-in URL, e.g. http://127.0.0.1:10000 (required)
//   TOOLPROC_SCENARIOS  scenario files, separated by the path delimiter (":"
//                       on Unix). Default: ../testdata/streams/openai_chat.json
//                       and, if present, ../testdata/streams/openai_responses.json.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { delimiter } from 'node:path';
import { fileURLToPath } from 'node:url';

import OpenAI from 'openai';
import { jsonSchema, streamText, tool } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';

// testenv.ScenarioHeader: the fake upstream plays the scenario it names.
const SCENARIO_HEADER = 'x-toolproc-scenario';
// testenv.XMLPrefix: routed to the profile with stream.xml_tool_calls.
const XML_PREFIX = '/xml';
const API_KEY = 'sk-toolproc-conformance';
const MODEL = 'gpt-4o';
// A scenario that has not settled by then fails as a hang.
const SCENARIO_TIMEOUT_MS = 10_000;

globalThis.AI_SDK_LOG_WARNINGS = false;

const BASE = (process.env.TOOLPROC_BASE_URL ?? '').replace(/\/+$/, '');

function scenarioFiles() {
  if (process.env.TOOLPROC_SCENARIOS) {
    return process.env.TOOLPROC_SCENARIOS.split(delimiter).filter(Boolean);
  }
  const rel = (f) => fileURLToPath(new URL(`../testdata/streams/${f}`, import.meta.url));
  const files = [rel('openai_chat.json')];
  if (existsSync(rel('openai_responses.json'))) files.push(rel('openai_responses.json'));
  return files;
}

function loadScenarios() {
  const all = [];
  for (const f of scenarioFiles()) {
    const list = JSON.parse(readFileSync(f, 'utf8'));
    assert.ok(Array.isArray(list), `${f}: want a JSON array of scenarios`);
    all.push(...list);
  }
  return all;
}

function baseURL(s) {
  return `${BASE}${s.xml ? XML_PREFIX : ''}/v1`;
}

// One function tool per distinct expected call name; the models accept any
// object so the clients never reject arguments on schema grounds.
function toolNames(s) {
  return [...new Set((s.expect.tool_calls ?? []).map((c) => c.name))];
}

function parseArgs(raw) {
  if (typeof raw !== 'string') return raw ?? null;
  try {
    return JSON.parse(raw);
  } catch {
    return { '<unparsable arguments>': raw };
  }
}

// want and got are compared in one deepStrictEqual so a failure prints a
// single diff of everything the client assembled.
function want(s, { finishReason = (r) => r, usage = true } = {}) {
  const e = s.expect;
  const w = {
    text: e.text ?? '',
    tool_calls: (e.tool_calls ?? []).map((c) => ({
      id: c.id ? c.id : '<any non-empty id>',
      name: c.name,
      arguments: c.arguments ?? null,
    })),
    finish_reason: finishReason(e.finish_reason ?? ''),
  };
  if (usage && e.total_tokens) w.total_tokens = e.total_tokens;
  return w;
}

function got(s, { text, calls, finishReason, totalTokens }) {
  const g = {
    text: text ?? '',
    tool_calls: calls.map((c, i) => {
      const wantID = s.expect.tool_calls?.[i]?.id;
      const id = typeof c.id === 'string' && c.id !== '' && !wantID ? '<any non-empty id>' : c.id;
      return { id, name: c.name, arguments: parseArgs(c.arguments) };
    }),
    finish_reason: finishReason ?? '',
  };
  if (s.expect.total_tokens) g.total_tokens = totalTokens;
  return g;
}

function describeError(err) {
  if (!err) return String(err);
  const parts = [err.name, err.message];
  if (err.status) parts.push(`status ${err.status}`);
  if (err.cause?.message) parts.push(`cause: ${err.cause.message}`);
  return parts.filter(Boolean).join(': ');
}

// run gives fn an AbortSignal that fires after SCENARIO_TIMEOUT_MS and turns
// "the client was still waiting" into a clear failure.
async function run(s, fn) {
  const ctl = new AbortController();
  const timer = setTimeout(
    () => ctl.abort(new Error(`no result within ${SCENARIO_TIMEOUT_MS / 1000}s: the client hung`)),
    SCENARIO_TIMEOUT_MS,
  );
  try {
    return await fn(ctl.signal);
  } finally {
    clearTimeout(timer);
    if (ctl.signal.aborted) assert.fail(`${s.name}: ${ctl.signal.reason.message}`);
  }
}

// expectStreamError checks a stream_error scenario: the client reported an
// error, and the text it delivered (before or after the error) is exactly
// the expected text.
function expectStreamError(s, { text, error }) {
  assert.ok(error, `${s.name}: the upstream failed mid-stream but the client reported success (text ${JSON.stringify(text)})`);
  assert.equal(
    text ?? '',
    s.expect.text ?? '',
    `${s.name}: the text the client received around the error (the error: ${describeError(error)})`,
  );
}

// --- openai (openai-node) ------------------------------------------------

function openaiClient(s) {
  return new OpenAI({
    apiKey: API_KEY,
    baseURL: baseURL(s),
    defaultHeaders: { [SCENARIO_HEADER]: s.name },
    maxRetries: 0,
    // Longer than run()'s deadline, so a hang is reported as one and never
    // mistaken for the error a stream_error scenario wants.
    timeout: 3 * SCENARIO_TIMEOUT_MS,
  });
}

async function openaiChat(s, signal) {
  const client = openaiClient(s);
  const tools = toolNames(s).map((name) => ({ type: 'function', function: { name, parameters: { type: 'object' } } }));
  const body = {
    model: MODEL,
    messages: [{ role: 'user', content: 'go' }],
    ...(tools.length ? { tools } : {}),
  };
  let text = '';
  let completion;
  let error;
  try {
    if (s.client_stream) {
      const stream = client.chat.completions.stream(
        { ...body, stream_options: s.include_usage ? { include_usage: true } : undefined },
        { signal },
      );
      for await (const chunk of stream) {
        const c = chunk.choices?.[0]?.delta?.content;
        if (typeof c === 'string') text += c;
      }
      completion = await stream.finalChatCompletion();
    } else {
      completion = await client.chat.completions.create({ ...body, stream: false }, { signal });
    }
  } catch (err) {
    if (signal.aborted) return; // run() reports the hang
    error = err;
  }
  if (s.expect.stream_error) {
    expectStreamError(s, { text: s.client_stream ? text : (completion?.choices?.[0]?.message?.content ?? ''), error });
    return;
  }
  if (error) assert.fail(`${s.name}: openai rejected the answer: ${describeError(error)}`);
  const choice = completion.choices?.[0];
  assert.ok(choice, `${s.name}: completion has no choices[0]: ${JSON.stringify(completion)}`);
  const msg = choice.message ?? {};
  assert.deepStrictEqual(
    got(s, {
      text: msg.content,
      calls: (msg.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function?.name, arguments: c.function?.arguments })),
      finishReason: choice.finish_reason,
      totalTokens: completion.usage?.total_tokens,
    }),
    want(s),
    `${s.name}: what openai assembled differs from the scenario's expectation`,
  );
}

// openai_responses scenarios go through client.responses.stream / create.
async function openaiResponses(s, signal) {
  const client = openaiClient(s);
  const tools = toolNames(s).map((name) => ({ type: 'function', name, parameters: { type: 'object' }, strict: false }));
  const body = { model: MODEL, input: 'go', ...(tools.length ? { tools } : {}) };
  let text = '';
  let response;
  let error;
  try {
    if (s.client_stream) {
      const stream = client.responses.stream(body, { signal });
      for await (const ev of stream) {
        if (ev.type === 'response.output_text.delta') text += ev.delta;
      }
      response = await stream.finalResponse();
    } else {
      response = await client.responses.create({ ...body, stream: false }, { signal });
    }
  } catch (err) {
    if (signal.aborted) return;
    error = err;
  }
  if (s.expect.stream_error) {
    expectStreamError(s, { text: s.client_stream ? text : (response?.output_text ?? ''), error });
    return;
  }
  if (error) assert.fail(`${s.name}: openai rejected the answer: ${describeError(error)}`);
  const output = response.output ?? [];
  const finalText = output
    .filter((o) => o.type === 'message')
    .flatMap((o) => o.content ?? [])
    .filter((c) => c.type === 'output_text')
    .map((c) => c.text)
    .join('');
  assert.deepStrictEqual(
    got(s, {
      text: finalText,
      calls: output
        .filter((o) => o.type === 'function_call')
        .map((o) => ({ id: o.call_id, name: o.name, arguments: o.arguments })),
      finishReason: response.status,
      totalTokens: response.usage?.total_tokens,
    }),
    want(s),
    `${s.name}: what openai assembled differs from the scenario's expectation`,
  );
}

// --- ai (Vercel AI SDK, @ai-sdk/openai-compatible) -------------------------

const AI_FINISH = {
  stop: 'stop',
  tool_calls: 'tool-calls',
  function_call: 'tool-calls',
  length: 'length',
  content_filter: 'content-filter',
};

async function aiStream(s, signal) {
  const provider = createOpenAICompatible({
    name: 'toolproc',
    baseURL: baseURL(s),
    apiKey: API_KEY,
    headers: { [SCENARIO_HEADER]: s.name },
    includeUsage: Boolean(s.include_usage),
  });
  const tools = Object.fromEntries(
    toolNames(s).map((name) => [name, tool({ description: name, inputSchema: jsonSchema({ type: 'object' }) })]),
  );
  let text = '';
  const calls = [];
  const errors = [];
  let finishReason;
  let rawFinishReason;
  let totalTokens;
  try {
    const result = streamText({
      model: provider(MODEL),
      prompt: 'go',
      tools,
      maxRetries: 0,
      abortSignal: signal,
      onError: () => {}, // errors are collected from fullStream below
    });
    for await (const part of result.fullStream) {
      switch (part.type) {
        case 'text-delta':
          text += part.text;
          break;
        case 'tool-call':
          if (part.invalid) {
            errors.push(new Error(`invalid tool call ${part.toolName}: ${describeError(part.error)}`));
          }
          calls.push({ id: part.toolCallId, name: part.toolName, arguments: part.input });
          break;
        case 'tool-error':
          errors.push(new Error(`tool-error for ${part.toolName}: ${describeError(part.error)}`));
          break;
        case 'error':
          errors.push(part.error);
          break;
        case 'finish':
          finishReason = part.finishReason;
          rawFinishReason = part.rawFinishReason;
          totalTokens = part.totalUsage?.totalTokens;
          break;
      }
    }
  } catch (err) {
    if (signal.aborted) return;
    errors.push(err);
  }
  if (s.expect.stream_error) {
    expectStreamError(s, { text, error: errors[0] });
    return;
  }
  if (errors.length) {
    assert.fail(`${s.name}: ai reported ${errors.length} error(s): ${errors.map(describeError).join('; ')}`);
  }
  assert.deepStrictEqual(
    got(s, { text, calls, finishReason, totalTokens }),
    want(s, { finishReason: (r) => AI_FINISH[r] ?? (r ? 'other' : '') }),
    `${s.name}: what ai assembled differs from the scenario's expectation (raw finish_reason ${JSON.stringify(rawFinishReason)})`,
  );
}

// --- tests -----------------------------------------------------------------

assert.ok(BASE, 'TOOLPROC_BASE_URL is not set (e.g. http://127.0.0.1:10000)');
const scenarios = loadScenarios();
assert.ok(
  scenarios.some((s) => s.dialect === 'openai_chat'),
  `no openai_chat scenarios in ${scenarioFiles().join(', ')}`,
);

// Tests get their own timeout on top of run()'s, in case a client ignores
// its abort signal.
const opts = { timeout: SCENARIO_TIMEOUT_MS + 5_000 };

for (const s of scenarios) {
  if (s.dialect === 'openai_chat') {
    test(`openai:${s.name}`, opts, () => run(s, (signal) => openaiChat(s, signal)));
    if (s.client_stream) {
      test(`ai:${s.name}`, opts, () => run(s, (signal) => aiStream(s, signal)));
    }
  } else if (s.dialect === 'openai_responses') {
    test(`openai:${s.name}`, opts, () => run(s, (signal) => openaiResponses(s, signal)));
  }
}
