// An ACP client built on the official TypeScript SDK (@agentclientprotocol/sdk,
// its v1 client) driving `mx-claw acp` as a subprocess. Run by
// TestACPOfficialClient (acp_e2e_test.go), which serves the scripted model
// and sets:
//   MX_CLAW_BIN    the mx-claw binary
//   ACP_SDK_DIR    the npm prefix the SDK is installed under (make test-deps)
//   ACP_WORKSPACE  the workspace, holding a.txt
// plus MX_CLAW_HOME. The model script it expects: todo_write, read_file a.txt,
// edit_file a.txt ("unsaved buffer" → "edited buffer"), then "Done editing.";
// the second prompt's answer hangs after its first piece.
//
// It asserts as it goes and prints one JSON summary line on success; any
// failure exits non-zero with the reason (and mx-claw's stderr).
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import assert from "node:assert/strict";

const sdkDir = process.env.ACP_SDK_DIR;
const require = createRequire(path.join(sdkDir, "package.json"));
const acp = await import(pathToFileURL(require.resolve("@agentclientprotocol/sdk")).href);

const ws = process.env.ACP_WORKSPACE;
const file = path.join(ws, "a.txt");
// The editor's unsaved buffer of a.txt differs from the disk ("disk line").
const buffers = new Map([[file, "unsaved buffer line\n"]]);

function timeout(ms, what) {
  return new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out: ${what}`)), ms).unref());
}

// start runs `mx-claw acp` and connects the SDK's client to it.
function start() {
  const child = spawn(process.env.MX_CLAW_BIN, ["acp"], { cwd: ws, env: process.env, stdio: ["pipe", "pipe", "pipe"] });
  const agent = { child, stderr: "", updates: [], permissions: [], reads: [], writes: [], onUpdate: null };
  child.stderr.on("data", (d) => (agent.stderr += d));
  const app = acp
    .client({ name: "mx-claw-test" })
    .onNotification("session/update", ({ params }) => {
      agent.updates.push(params);
      agent.onUpdate?.(params);
    })
    .onRequest("session/request_permission", async ({ params }) => {
      agent.permissions.push(params);
      return { outcome: { outcome: "selected", optionId: "allow_once" } };
    })
    .onRequest("fs/read_text_file", async ({ params }) => {
      agent.reads.push(params.path);
      if (!buffers.has(params.path)) throw new Error(`no buffer for ${params.path}`);
      return { content: buffers.get(params.path) };
    })
    .onRequest("fs/write_text_file", async ({ params }) => {
      agent.writes.push(params);
      buffers.set(params.path, params.content);
      return {};
    });
  agent.conn = app.connect(acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));
  agent.stop = async () => {
    child.stdin.end();
    await Promise.race([new Promise((r) => child.once("exit", r)), timeout(10000, "mx-claw acp to exit")]);
  };
  return agent;
}

async function initialize(agent) {
  const init = await agent.conn.agent.request("initialize", {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
    clientInfo: { name: "mx-claw-test", version: "1.0.0" },
  });
  assert.equal(init.protocolVersion, 1);
  assert.equal(init.agentCapabilities.loadSession, true);
  assert.equal(init.agentCapabilities.promptCapabilities.embeddedContext, true);
  return init;
}

const summary = {};
let first = start();
try {
  await initialize(first);
  const created = await first.conn.agent.request("session/new", {
    cwd: ws,
    mcpServers: [{ name: "fs", command: "/bin/true", args: [], env: [] }],
  });
  const sessionId = created.sessionId;
  assert.ok(sessionId);
  assert.equal(created.modes.currentModeId, "default");
  assert.deepEqual(created.modes.availableModes.map((m) => m.id).sort(), ["acceptEdits", "bypass", "default", "plan"]);
  summary.sessionId = sessionId;

  // Prompt 1: a plan, a read of the unsaved buffer, an edit that needs
  // permission (granted), the diff, and the answer.
  const res1 = await first.conn.agent.request("session/prompt", {
    sessionId,
    prompt: [{ type: "text", text: "Edit a.txt please" }],
  });
  assert.equal(res1.stopReason, "end_turn");
  const kinds = first.updates.map((n) => n.update.sessionUpdate);
  const plan = first.updates.find((n) => n.update.sessionUpdate === "plan");
  assert.ok(plan, `no plan in ${kinds}`);
  assert.deepEqual(plan.update.entries, [{ content: "Edit a.txt", priority: "medium", status: "in_progress" }]);
  const calls = first.updates.filter((n) => n.update.sessionUpdate === "tool_call").map((n) => n.update);
  const read = calls.find((c) => c.kind === "read");
  assert.ok(read, `no read tool call in ${JSON.stringify(calls)}`);
  assert.deepEqual(read.locations, [{ path: file }]);
  const edit = calls.find((c) => c.kind === "edit");
  assert.ok(edit, "no edit tool call");
  assert.equal(edit.status, "pending"); // announced before the permission request
  assert.equal(first.permissions.length, 1);
  const perm = first.permissions[0];
  assert.equal(perm.toolCall.toolCallId, edit.toolCallId);
  assert.deepEqual(perm.options.map((o) => o.kind).sort(), ["allow_always", "allow_once", "reject_always", "reject_once"]);
  const editDone = first.updates
    .map((n) => n.update)
    .find((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === edit.toolCallId && u.status === "completed");
  assert.ok(editDone, "the edit never completed");
  assert.deepEqual(editDone.content, [{ type: "diff", path: file, oldText: "unsaved buffer", newText: "edited buffer" }]);
  assert.ok(first.reads.includes(file), "read_file did not read through the editor");
  assert.equal(first.writes.length, 1);
  assert.equal(first.writes[0].content, "edited buffer line\n");
  const text = first.updates
    .filter((n) => n.update.sessionUpdate === "agent_message_chunk")
    .map((n) => n.update.content.text)
    .join("");
  assert.equal(text, "Done editing.");
  summary.prompt1 = { stopReason: res1.stopReason, updates: kinds.length };

  // Mode switch: plan, then back to default.
  const before = first.updates.length;
  await first.conn.agent.request("session/set_mode", { sessionId, modeId: "plan" });
  assert.equal(first.updates[before].update.sessionUpdate, "current_mode_update");
  assert.equal(first.updates[before].update.currentModeId, "plan");
  await first.conn.agent.request("session/set_mode", { sessionId, modeId: "default" });

  // Prompt 2: cancelled in the middle of the streamed answer.
  const streaming = new Promise((resolve) => {
    first.onUpdate = (n) => {
      if (n.update.sessionUpdate === "agent_message_chunk") resolve();
    };
  });
  const p2 = first.conn.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "Say a lot" }] });
  await Promise.race([streaming, timeout(20000, "the second answer to stream")]);
  await first.conn.agent.notify("session/cancel", { sessionId });
  const res2 = await Promise.race([p2, timeout(20000, "the cancelled prompt to end")]);
  assert.equal(res2.stopReason, "cancelled");
  summary.prompt2 = { stopReason: res2.stopReason };
} catch (err) {
  console.error("first process:", err, "\nmx-claw stderr:\n" + first.stderr);
  process.exit(1);
} finally {
  await first.stop();
}

// A new process loads the session: the stored transcript comes back as
// updates before the answer.
const second = start();
try {
  await initialize(second);
  const loaded = await second.conn.agent.request("session/load", { sessionId: summary.sessionId, cwd: ws, mcpServers: [] });
  assert.equal(loaded.modes.currentModeId, "default");
  const ups = second.updates.map((n) => n.update);
  const users = ups.filter((u) => u.sessionUpdate === "user_message_chunk").map((u) => u.content.text);
  assert.deepEqual(users, ["Edit a.txt please", "Say a lot"]);
  const answer = ups.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content.text);
  assert.ok(answer.includes("Done editing."), `replayed answers: ${answer}`);
  const edit = ups.find((u) => u.sessionUpdate === "tool_call" && u.kind === "edit");
  assert.ok(edit, "no edit in the replay");
  const statuses = ups.filter((u) => u.toolCallId === edit.toolCallId).map((u) => u.status);
  assert.deepEqual(statuses, ["pending", "in_progress", "completed"]);
  const editDone = ups.find((u) => u.toolCallId === edit.toolCallId && u.status === "completed");
  assert.equal(editDone.content[0].type, "diff");
  assert.ok(ups.some((u) => u.sessionUpdate === "plan"), "no plan in the replay");
  const listed = await second.conn.agent.request("session/list", { cwd: ws });
  assert.ok(listed.sessions.some((s) => s.sessionId === summary.sessionId));
  summary.load = { updates: ups.length, users };
} catch (err) {
  console.error("second process:", err, "\nmx-claw stderr:\n" + second.stderr);
  process.exit(1);
} finally {
  await second.stop();
}
summary.buffer = buffers.get(file);
console.log(JSON.stringify(summary));
