// The repair as a learner writes it in JavaScript with an official SDK (npm `openai`,
// `@anthropic-ai/sdk`), each call style the SDK offers, its retries left at their default.
// Run by tests/models/test_node_clients.py, from the folder its pinned packages were
// installed into. It talks JSON lines with the test: the first line it reads is its task
// ({provider, style, url, model, system, task, tools}); for each tool call it writes
// {"call": {name, arguments}} and reads the result's text; at the end it writes
// {"done": {calls, requestIds, finalText}}. The tools themselves run in the test (the
// course's RepoTools), so the conversation can be the recorded one.
import readline from 'node:readline';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';

const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const config = JSON.parse((await lines.next()).value);

async function toolResult(name, args) {
  process.stdout.write(JSON.stringify({ call: { name, arguments: args } }) + '\n');
  return (await lines.next()).value;
}

async function openaiTurn(client, asked, style) {
  if (style === 'whole') {
    const completion = await client.chat.completions.create(asked);
    return { message: completion.choices[0].message, requestId: completion._request_id };
  }
  if (style === 'stream_helper') {
    const stream = client.chat.completions.stream({ ...asked, stream_options: { include_usage: true } });
    const completion = await stream.finalChatCompletion();
    return { message: completion.choices[0].message, requestId: null };
  }
  const { data: stream, request_id: requestId } = await client.chat.completions
    .create({ ...asked, stream: true, stream_options: { include_usage: true } })
    .withResponse();
  let text = '';
  const calls = [];
  for await (const chunk of stream) {
    for (const choice of chunk.choices) {
      text += choice.delta.content ?? '';
      for (const piece of choice.delta.tool_calls ?? []) {
        calls[piece.index] ??= { id: piece.id, type: 'function', function: { name: '', arguments: '' } };
        calls[piece.index].function.name += piece.function?.name ?? '';
        calls[piece.index].function.arguments += piece.function?.arguments ?? '';
      }
    }
  }
  const message = { role: 'assistant', content: text };
  if (calls.length) message.tool_calls = calls;
  return { message, requestId };
}

async function runOpenAI() {
  const client = new OpenAI({ baseURL: `${config.url}/v1`, apiKey: 'sk-node' });
  const messages = [
    { role: 'system', content: config.system },
    { role: 'user', content: config.task },
  ];
  const done = { calls: [], requestIds: [], finalText: '' };
  for (let request = 0; request < 8; request += 1) {
    const asked = { model: config.model, messages, tools: config.tools };
    const { message, requestId } = await openaiTurn(client, asked, config.style);
    done.requestIds.push(requestId ?? null);
    messages.push(message);
    done.finalText = message.content ?? '';
    if (!message.tool_calls?.length) break;
    for (const call of message.tool_calls) {
      done.calls.push(call.function.name);
      const content = await toolResult(call.function.name, JSON.parse(call.function.arguments));
      messages.push({ role: 'tool', tool_call_id: call.id, content });
    }
  }
  return done;
}

async function anthropicTurn(client, asked, style) {
  if (style === 'whole') {
    const message = await client.messages.create(asked);
    return { content: message.content, requestId: message._request_id };
  }
  if (style === 'stream_helper') {
    const stream = client.messages.stream(asked);
    const message = await stream.finalMessage();
    return { content: message.content, requestId: stream.request_id ?? null };
  }
  const { data: stream, request_id: requestId } = await client.messages
    .create({ ...asked, stream: true })
    .withResponse();
  const blocks = [];
  const json = [];
  for await (const event of stream) {
    if (event.type === 'content_block_start') {
      blocks[event.index] = { ...event.content_block };
      json[event.index] = '';
    } else if (event.type === 'content_block_delta') {
      const block = blocks[event.index];
      const delta = event.delta;
      if (delta.type === 'text_delta') block.text += delta.text;
      else if (delta.type === 'input_json_delta') json[event.index] += delta.partial_json;
      else if (delta.type === 'thinking_delta') block.thinking += delta.thinking;
      else if (delta.type === 'signature_delta') block.signature += delta.signature;
    }
  }
  blocks.forEach((block, index) => {
    if (block.type === 'tool_use' && json[index]) block.input = JSON.parse(json[index]);
  });
  return { content: blocks, requestId };
}

async function runAnthropic() {
  const client = new Anthropic({ baseURL: config.url, apiKey: 'sk-ant-node' });
  const tools = config.tools.map((tool) => ({
    name: tool.function.name,
    description: tool.function.description,
    input_schema: tool.function.parameters,
  }));
  const messages = [{ role: 'user', content: config.task }];
  const done = { calls: [], requestIds: [], finalText: '' };
  for (let request = 0; request < 8; request += 1) {
    const asked = { model: config.model, max_tokens: 2048, system: config.system, messages, tools };
    const { content, requestId } = await anthropicTurn(client, asked, config.style);
    done.requestIds.push(requestId ?? null);
    messages.push({ role: 'assistant', content });
    done.finalText = content.filter((b) => b.type === 'text').map((b) => b.text).join('');
    const calls = content.filter((block) => block.type === 'tool_use');
    if (!calls.length) break;
    const results = [];
    for (const call of calls) {
      done.calls.push(call.name);
      const text = await toolResult(call.name, call.input);
      results.push({ type: 'tool_result', tool_use_id: call.id, content: text });
    }
    messages.push({ role: 'user', content: results });
  }
  return done;
}

const done = config.provider === 'openai' ? await runOpenAI() : await runAnthropic();
process.stdout.write(JSON.stringify({ done }) + '\n');
process.exit(0);
