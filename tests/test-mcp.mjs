// test-mcp.mjs: `subagentctl mcp` driven by the official MCP TypeScript SDK
// (Client + StdioClientTransport) and the official inspector's CLI mode.
//
// The SDK comes from the npm registry: scripts/lib/mcp-sdk.sh installs it
// (scripts/run-tests does) into SUBAGENT_MCP_SDK_DIR, by default
// <build>/mcp-sdk. Without it this test FAILS: it is never skipped.
//
// SPDX-License-Identifier: LGPL-2.1-or-later

import { execFileSync, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';

const subagentctl = process.env.SUBAGENTCTL;
const srcdir = process.env.G_TEST_SRCDIR;
const sdkDir = path.resolve(process.env.SUBAGENT_MCP_SDK_DIR || process.argv[2] || '.');

function fail (message) {
  console.error(`not ok - ${message}`);
  process.exit(1);
}

if (!subagentctl || !srcdir)
  fail('run through meson test: SUBAGENTCTL and G_TEST_SRCDIR are not set');
if (!fs.existsSync(path.join(sdkDir, 'node_modules', '@modelcontextprotocol', 'sdk', 'package.json')))
  fail(`the MCP TypeScript SDK is not installed in ${sdkDir}: run scripts/lib/mcp-sdk.sh ${sdkDir} ` +
       '(scripts/run-tests does), or set SUBAGENT_MCP_SDK_DIR');

const require = createRequire(path.join(sdkDir, 'node_modules', '.mcp-test'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const {
  ElicitRequestSchema,
  ToolListChangedNotificationSchema,
  CallToolResultSchema,
} = require('@modelcontextprotocol/sdk/types.js');

const child = path.join(srcdir, 'fixtures', 'children', 'mcp-child.sh');
// What the slow child sleeps: unique to this run, so that the process
// checks see only our children.
const SLEEP = `301.${process.pid}`;
let passed = 0;

async function step (name, body) {
  const started = Date.now();
  try {
    await body();
  } catch (error) {
    console.error(error);
    fail(name);
  }
  passed++;
  console.log(`ok ${passed} - ${name} (${Date.now() - started} ms)`);
}

async function until (what, predicate, timeoutMs = 15000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await predicate())
      return;
    await new Promise(resolve => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function git (root, ...args) {
  return execFileSync('git', ['-C', root, ...args], { encoding: 'utf8' });
}

// A git repository with definitions whose children are mcp-child.sh.
function makeRoot () {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'subagent-mcp-')));
  git(root, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(root, 'README'), 'a project\n');
  git(root, 'add', 'README');
  git(root, 'commit', '-q', '-m', 'init');
  fs.mkdirSync(path.join(root, '.subagent', 'agents'), { recursive: true });
  fs.writeFileSync(path.join(root, '.subagent', 'config.yaml'),
                   `runner:\n  command: [${JSON.stringify(child)}, work]\n  max_parallel: 2\n`);
  const def = (name, description, args) =>
    fs.writeFileSync(path.join(root, '.subagent', 'agents', `${name}.yaml`),
                     `name: ${name}\ndescription: ${description}\ncommand: ${JSON.stringify([child, ...args])}\n`);
  def('slow', 'Sleeps until cancelled', ['slow', SLEEP]);
  def('asker', 'Asks for an approval to delete a file', ['ask']);
  def('broken', 'Always fails', ['fail']);
  def('writer', 'Writes its task down', ['work']);
  fs.mkdirSync(path.join(root, '.subagent', 'teams'));
  fs.writeFileSync(path.join(root, '.subagent', 'teams', 'pair.yaml'),
                   'name: pair\ndescription: Two writers\nmembers: [writer, {def: writer, isolation: directory-snapshot}]\n');
  return root;
}

// Processes whose command line is exactly @argv.
function processesRunning (argv) {
  const wanted = argv.join('\0');
  let found = 0;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry))
      continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0$/, '');
      if (cmdline === wanted)
        found++;
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

function worktreesOf (root) {
  return git(root, 'worktree', 'list', '--porcelain').split('\n').filter(l => l.startsWith('worktree ')).length - 1;
}

async function connect (root, { elicitation = null } = {}) {
  const transport = new StdioClientTransport({
    command: subagentctl,
    args: ['mcp', '--interactive', '--root', root],
    env: { ...process.env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr.on('data', chunk => { stderr += chunk; });
  const capabilities = elicitation ? { elicitation: {} } : {};
  const client = new Client({ name: 'libsubagent-test', version: '1.0.0' }, { capabilities });
  const listChanged = [];
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => { listChanged.push(Date.now()); });
  if (elicitation)
    client.setRequestHandler(ElicitRequestSchema, (request, extra) => elicitation(request.params, extra));
  await client.connect(transport);
  const proc = transport._process;
  const exited = new Promise(resolve => proc.on('exit', (code, signal) => resolve({ code, signal })));
  let raw = '';
  proc.stdout.on('data', chunk => { raw += chunk; });
  return { client, transport, proc, exited, listChanged, stderr: () => stderr, raw: () => raw };
}

// The server leaves cleanly on EOF: exit status 0 (an ASan/UBSan report or
// a leak would make it fail), nothing left behind.
async function disconnect (session) {
  session.proc.stdin.end();
  const { code, signal } = await session.exited;
  await session.client.close();
  if (code !== 0 || /AddressSanitizer|LeakSanitizer|runtime error:/.test(session.stderr()))
    throw new Error(`subagentctl mcp exited with ${code ?? signal}:\n${session.stderr()}`);
}

const root = makeRoot();
const elicited = [];
let withdrawn = null;
const session = await connect(root, {
  elicitation: (params, extra) => {
    // The SDK starts a handler two promise steps after the request, and
    // handles notifications/cancelled one step after it: when both came in
    // one read (the test blocks in execFileSync meanwhile), the signal has
    // already fired by the time the handler runs.
    if (params.message.includes('{"path":"cli"}'))
      return new Promise(resolve => {
        const withdraw = () => {
          withdrawn = String(extra.signal.reason);
          resolve({ action: 'cancel' });
        };
        if (extra.signal.aborted)
          withdraw();
        else
          extra.signal.addEventListener('abort', withdraw, { once: true });
      });
    elicited.push(params);
    if (params.message.includes('{"path":"yes"}'))
      return { action: 'accept', content: { decision: 'approve' } };
    if (params.message.includes('{"path":"decline"}'))
      return { action: 'decline' };
    return { action: 'accept', content: { decision: 'deny', reason: 'not on a Thursday' } };
  },
});
const { client } = session;
let tools;

await step('initialize: version negotiation, ping, before-initialize refusal', async () => {
  assert.equal(client.getServerVersion().name, 'subagentctl');
  assert.ok(client.getServerCapabilities().tools.listChanged);
  await client.ping();
  const init = (id, version) => JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize',
    params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });
  const run = spawnSync(subagentctl, ['mcp', '--root', root], {
    encoding: 'utf8', timeout: 30000,
    input: [JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'tools/list' }),
            init(1, '2024-11-05'), init(2, '2025-03-26'), init(3, '2025-06-18'), init(4, '1999-01-01'),
            JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
            JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'ping' })].join('\n') + '\n',
  });
  assert.equal(run.status, 0, run.stderr);
  const replies = run.stdout.trim().split('\n').map(line => JSON.parse(line));
  assert.equal(replies.length, 6, run.stdout);
  assert.equal(replies[0].error.code, -32002);
  assert.deepEqual(replies.slice(1, 5).map(r => r.result.protocolVersion),
                   ['2024-11-05', '2025-03-26', '2025-06-18', '2025-06-18']);
  assert.deepEqual(replies[5], { jsonrpc: '2.0', id: 5, result: {} });
});

await step('tools/list: the delegation tools with valid input and output schemas', async () => {
  ({ tools } = await client.listTools());
  const names = tools.map(t => t.name).sort();
  assert.deepEqual(names, ['subagent', 'subagent_asker', 'subagent_batch', 'subagent_broken', 'subagent_slow', 'subagent_writer', 'team']);
  for (const tool of tools) {
    assert.equal(tool.inputSchema.type, 'object', tool.name);
    assert.equal(tool.outputSchema.type, 'object', tool.name);
    assert.equal(tool.inputSchema.additionalProperties, false, tool.name);
  }
  const subagent = tools.find(t => t.name === 'subagent');
  assert.deepEqual(subagent.inputSchema.required, ['task']);
  assert.ok(subagent.inputSchema.properties.isolation.enum.includes('worktree'));
  assert.deepEqual(tools.find(t => t.name === 'subagent_batch').inputSchema.required, ['tasks']);
});

await step('subagent in worktree isolation: structured result and a review link', async () => {
  const notes = [];
  const result = await client.callTool({ name: 'subagent', arguments: { task: 'write the change', isolation: 'worktree' } },
                                       CallToolResultSchema, { onprogress: p => notes.push(p) });
  assert.equal(result.isError, false, JSON.stringify(result));
  assert.deepEqual(notes.map(n => [n.progress, n.total, n.message.split(' ')[0]]),
                   [[1, 3, 'accepted'], [2, 3, 'started'], [2.5, 3, 'usage'], [3, 3, 'finished']]);
  const s = result.structuredContent;
  assert.equal(s.status, 'complete');
  assert.equal(s.final_answer, 'did: write the change');
  assert.equal(s.iterations, 1);
  assert.equal(s.cost_cents, 0.25);
  assert.equal(s.lineage.isolation, 'worktree');
  assert.match(s.review.patch_uri, /^subagent:\/\/reviews\/[A-Za-z0-9_-]+\.patch$/);
  assert.match(result.content[0].text, /did: write the change/);
  const link = result.content.find(c => c.type === 'resource_link');
  assert.equal(link.uri, s.review.patch_uri);
  const patch = await client.readResource({ uri: link.uri });
  assert.match(patch.contents[0].text, /mcp-change\.txt/);
  assert.match(patch.contents[0].text, /\+write the change/);
  const { resources } = await client.listResources();
  assert.ok(resources.some(r => r.uri === link.uri));
  assert.ok(resources.some(r => r.uri === `subagent://sessions/${s.run_id}`));
  const record = JSON.parse((await client.readResource({ uri: `subagent://sessions/${s.run_id}` })).contents[0].text);
  assert.equal(record.session_id, s.run_id);
  assert.equal(worktreesOf(root), 0);
  assert.equal(fs.existsSync(path.join(root, 'mcp-change.txt')), false);
});

await step('a child failure is a tool result with isError naming its session', async () => {
  const result = await client.callTool({ name: 'subagent_broken', arguments: { task: 'x', isolation: 'shared' } })
    .catch(error => ({ thrown: error }));
  assert.equal(result.thrown, undefined, String(result.thrown));
  assert.equal(result.isError, true);
  const session = result.structuredContent?.session_id;
  assert.ok(session, JSON.stringify(result));
  assert.ok(result.content[0].text.includes(session), result.content[0].text);
});

await step('subagent_batch: progress notifications, items as they finish', async () => {
  const notes = [];
  const result = await client.callTool(
    { name: 'subagent_batch', arguments: { tasks: [{ task: 'one' }, { task: 'two' }, { task: 'three', isolation: 'directory-snapshot' }], isolation: 'shared' } },
    CallToolResultSchema,
    { onprogress: p => notes.push(p) });
  assert.equal(result.isError, false, JSON.stringify(result));
  const results = result.structuredContent.results;
  assert.deepEqual(results.map(r => r.batch_index), [0, 1, 2]);
  assert.deepEqual(results.map(r => r.final_answer), ['did: one', 'did: two', 'did: three']);
  // Three whole steps per child, a usage report half-way in between.
  const whole = notes.filter(n => Number.isInteger(n.progress));
  assert.deepEqual(whole.map(n => n.progress), [1, 2, 3, 4, 5, 6, 7, 8, 9], JSON.stringify(notes));
  assert.ok(notes.every((n, i) => i === 0 || n.progress > notes[i - 1].progress));
  assert.ok(notes.every(n => n.total === 9));
  const usage = notes.filter(n => n.message.startsWith('usage of item'));
  assert.equal(usage.length, 3, JSON.stringify(notes));
  assert.ok(usage.every(n => /so far: 1 iterations, 1 tool calls, 0.25 cents/.test(n.message)));
  const finished = notes.filter(n => n.message.startsWith('finished item'));
  assert.equal(finished.length, 3);
  assert.ok(finished.every(n => /complete; usage 1 iterations, 1 tool calls, 0.25 cents/.test(n.message)), JSON.stringify(finished));
  assert.equal(result.content.filter(c => c.type === 'resource_link').length, 1);
});

await step('notifications/cancelled: the child is killed and its worktree removed', async () => {
  const controller = new AbortController();
  const notes = [];
  const call = client.callTool({ name: 'subagent_slow', arguments: { task: 'nap', isolation: 'worktree' } },
                               CallToolResultSchema,
                               { signal: controller.signal, onprogress: p => notes.push(p) });
  const settled = call.then(() => 'resolved', () => 'rejected');
  await until('the slow child to run', () => processesRunning(['sleep', SLEEP]) === 1 && worktreesOf(root) === 1);
  assert.ok(notes.some(n => n.message.startsWith('started')));
  controller.abort('the user changed their mind');
  assert.equal(await settled, 'rejected');
  await until('the child to be gone', () => processesRunning(['sleep', SLEEP]) === 0);
  await until('the worktree to be removed', () => worktreesOf(root) === 0);
  const worktrees = path.join(root, '.subagent', 'worktrees');
  if (fs.existsSync(worktrees))
    assert.deepEqual(fs.readdirSync(worktrees).filter(e => !e.startsWith('.')), []);
  await client.ping();
});

await step('approvals through elicitation/create: one approved, one denied', async () => {
  const yes = await client.callTool({ name: 'subagent_asker', arguments: { task: 'yes', isolation: 'shared' } });
  assert.equal(yes.isError, false, JSON.stringify(yes));
  assert.match(yes.structuredContent.final_answer, /"approved":true/);
  const no = await client.callTool({ name: 'subagent_asker', arguments: { task: 'no', isolation: 'shared' } });
  assert.equal(no.isError, false, JSON.stringify(no));
  assert.match(no.structuredContent.final_answer, /"approved":false/);
  assert.match(no.structuredContent.final_answer, /not on a Thursday/);
  const declined = await client.callTool({ name: 'subagent_asker', arguments: { task: 'decline', isolation: 'shared' } });
  assert.match(declined.structuredContent.final_answer, /"approved":false/);
  assert.match(declined.structuredContent.final_answer, /declined/);
  assert.equal(elicited.length, 3);
  for (const params of elicited) {
    assert.match(params.message, /delete_file/);
    assert.match(params.message, /shared isolation/);
    assert.deepEqual(params.requestedSchema.properties.decision.enum, ['approve', 'deny']);
  }
});

await step('an approval answered elsewhere withdraws the client\'s form', async () => {
  const asked = () => [...session.stderr().matchAll(/approval request ([A-Za-z0-9_-]+); answer it in the MCP client, or with/g)];
  const before = asked().length;
  const call = client.callTool({ name: 'subagent_asker', arguments: { task: 'cli', isolation: 'shared' } });
  await until('the request on stderr', () => asked().length > before);
  const id = asked()[before][1];
  execFileSync(subagentctl, ['approvals', 'deny', '--root', root, '--reason', 'from the terminal', id], { encoding: 'utf8' });
  const result = await call;
  assert.match(result.structuredContent.final_answer, /"approved":false/);
  assert.match(result.structuredContent.final_answer, /from the terminal/);
  try {
    await until('the form to be withdrawn', () => withdrawn !== null);
  } catch (error) {
    console.error(`subagentctl mcp's stderr:\n${session.stderr()}`);
    throw error;
  }
  assert.match(withdrawn, /answered elsewhere: denied/);
});

await step('team: members in parallel, their answers combined', async () => {
  const result = await client.callTool({ name: 'team', arguments: { task: 'pair work', team_name: 'pair', isolation: 'shared' } });
  assert.equal(result.isError, false, JSON.stringify(result));
  const s = result.structuredContent;
  assert.equal(s.team, 'pair');
  assert.deepEqual(s.members.map(m => m.member), ['writer', 'writer']);
  assert.deepEqual(s.members.map(m => m.final_answer), ['did: pair work', 'did: pair work']);
  assert.match(s.output, /## writer\ndid: pair work/);
  assert.equal(result.content.filter(c => c.type === 'resource_link').length, 1);
});

await step('a definition added while connected: tools/list_changed', async () => {
  const before = session.listChanged.length;
  fs.writeFileSync(path.join(root, '.subagent', 'agents', 'late.yaml'),
                   `name: late\ndescription: Came later\ncommand: ${JSON.stringify([child, 'work'])}\n`);
  await until('notifications/tools/list_changed', () => session.listChanged.length > before, 20000);
  const { tools: now } = await client.listTools();
  assert.ok(now.some(t => t.name === 'subagent_late'));
  const result = await client.callTool({ name: 'subagent_late', arguments: { task: 'late work', isolation: 'shared' } });
  assert.equal(result.structuredContent.final_answer, 'did: late work');
});

await step('malformed messages get JSON-RPC errors; the server stays up', async () => {
  const stdin = session.proc.stdin;
  stdin.write('this is not json\n');
  stdin.write(Buffer.from([0xff, 0xfe, 0x7b, 0x0a]));
  stdin.write('[{"jsonrpc":"2.0","id":"in-a-batch","method":"ping"}]\n');
  stdin.write('{"jsonrpc":"2.0","id":"bad-1","method":42}\n');
  stdin.write('{"jsonrpc":"2.0","id":"bad-2","method":"no/such/method"}\n');
  await until('the error responses', () => /"code":-32700,"message":"Parse error: <data>/.test(session.raw()) &&
                                            /"code":-32700,"message":"Parse error: the line is not valid UTF-8"/.test(session.raw()) &&
                                            /"code":-32600,"message":"Invalid Request: JSON-RPC batches/.test(session.raw()) &&
                                            /"id":"bad-1","error":\{"code":-32600/.test(session.raw()) &&
                                            /"id":"bad-2","error":\{"code":-32601/.test(session.raw()));
  await client.ping();
  const { tools: again } = await client.listTools();
  assert.ok(again.length >= 5);
});

await step('EOF: clean shutdown while a child runs (child cancelled, workspace cleaned)', async () => {
  const call = client.callTool({ name: 'subagent_slow', arguments: { task: 'nap', isolation: 'worktree' } })
    .catch(() => null);
  await until('the slow child to run', () => processesRunning(['sleep', SLEEP]) === 1 && worktreesOf(root) === 1);
  await disconnect(session);
  await call;
  assert.equal(processesRunning(['sleep', SLEEP]), 0);
  assert.equal(worktreesOf(root), 0);
  const sessions = fs.readdirSync(path.join(root, '.subagent', 'sessions'));
  assert.ok(sessions.length >= 1);
  assert.match(session.stderr(), /client closed stdin/);
});

await step('without elicitation, approvals wait in the queue for `subagentctl approvals`', async () => {
  const plain = await connect(root);
  const call = plain.client.callTool({ name: 'subagent_asker', arguments: { task: 'queue', isolation: 'shared' } });
  let id = null;
  await until('the request in the queue', () => {
    const m = plain.stderr().match(/approval request ([A-Za-z0-9_-]+); answer it with/);
    id = m && m[1];
    return id !== null;
  });
  execFileSync(subagentctl, ['approvals', 'approve', '--root', root, id], { encoding: 'utf8' });
  const result = await call;
  assert.match(result.structuredContent.final_answer, /"approved":true/);
  await disconnect(plain);
});

await step('caps hold for the session: runner.max_agents and budget.max_cost_cents', async () => {
  const capped = makeRoot();
  fs.writeFileSync(path.join(capped, '.subagent', 'config.yaml'),
                   `runner:\n  command: [${JSON.stringify(child)}, work]\n  max_agents: 2\n`);
  const a = await connect(capped);
  const bad = await a.client.callTool({ name: 'subagent', arguments: { task: 'x', colour: 'red' } });
  assert.equal(bad.isError, true);
  assert.match(bad.content[0].text, /colour/);
  const tooMany = await a.client.callTool({ name: 'subagent_batch', arguments: { tasks: [{ task: '1' }, { task: '2' }, { task: '3' }], isolation: 'shared' } });
  assert.equal(tooMany.isError, true);
  assert.match(tooMany.content[0].text, /cap|max_agents/i);
  for (const task of ['first', 'second']) {
    const ok = await a.client.callTool({ name: 'subagent', arguments: { task, isolation: 'shared' } });
    assert.equal(ok.isError, false, JSON.stringify(ok));
  }
  const third = await a.client.callTool({ name: 'subagent', arguments: { task: 'third', isolation: 'shared' } });
  assert.equal(third.isError, true);
  assert.match(third.content[0].text, /runner\.max_agents/);
  await disconnect(a);

  fs.writeFileSync(path.join(capped, '.subagent', 'config.yaml'),
                   `runner:\n  command: [${JSON.stringify(child)}, work]\nbudget:\n  max_cost_cents: 0.3\n`);
  const b = await connect(capped);
  const first = await b.client.callTool({ name: 'subagent', arguments: { task: 'one', isolation: 'shared' } });
  assert.equal(first.structuredContent.status, 'complete');
  const second = await b.client.callTool({ name: 'subagent', arguments: { task: 'two', isolation: 'shared' } });
  assert.equal(second.structuredContent.status, 'partial', JSON.stringify(second.structuredContent));
  assert.match(second.structuredContent.reason, /budget/);
  const third2 = await b.client.callTool({ name: 'subagent', arguments: { task: 'three', isolation: 'shared' } });
  assert.equal(third2.isError, true);
  assert.match(third2.content[0].text, /budget\.max_cost_cents/);
  await disconnect(b);
  fs.rmSync(capped, { recursive: true, force: true });
});

await step('the official inspector, CLI mode: --method tools/list', async () => {
  const cli = path.join(sdkDir, 'node_modules', '@modelcontextprotocol', 'inspector', 'cli', 'build', 'cli.js');
  const run = spawnSync(process.execPath, [cli, '--cli', subagentctl, 'mcp', '--method', 'tools/list'],
                        { cwd: root, encoding: 'utf8', timeout: 60000 });
  assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
  const listed = JSON.parse(run.stdout);
  assert.ok(listed.tools.some(t => t.name === 'subagent'));
  assert.ok(listed.tools.some(t => t.name === 'subagent_late'));
});

fs.rmSync(root, { recursive: true, force: true });
console.log(`1..${passed}`);
