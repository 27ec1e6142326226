// An ACP client on the TypeScript SDK (ClientSideConnection), driven by
// rpc's TestACPWithTypeScriptSDK. It holds "editor buffers" for the files
// the daemon reads and writes, answers permission requests from a script,
// and records every line each daemon wrote.
//
//   node sdk-client.mjs <daemon> <cwd> <record.jsonl> <transcript-new> <transcript-prompts>
//
// Flow: session/new in a first daemon; in a second one session/load, the
// mode set through session/set_config_option, then three prompts: read and edit (allowed), an edit denied, an edit
// cancelled while its permission is pending; then session/close. It prints
// a JSON summary on stdout; the Go test checks it and the record.
import { spawn } from "node:child_process";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [daemonPath, cwd, recordPath, transcriptNew, transcriptPrompts] = process.argv.slice(2);
writeFileSync(recordPath, "");

const notes = join(cwd, "notes.txt");
const buffers = new Map([[notes, readFileSync(notes, "utf8").replace("beta", "beta (unsaved)")]]);
const summary = { stopReasons: [], permissions: [], reads: 0, writes: 0, updates: 0, errors: [] };
let answer = "allow_once";
let onPermission = null; // when set, called with the request; returns the outcome

class Client {
  async requestPermission(p) {
    summary.permissions.push({ title: p.toolCall.title, locations: p.toolCall.locations ?? [] });
    if (onPermission) return await onPermission(p);
    return { outcome: { outcome: "selected", optionId: answer } };
  }
  async sessionUpdate(n) {
    summary.updates++;
    if (n.update.sessionUpdate === "available_commands_update") {
      summary.commands = n.update.availableCommands.map((c) => c.name);
    }
  }
  async readTextFile(p) {
    summary.reads++;
    if (buffers.has(p.path)) return { content: buffers.get(p.path) };
    return { content: readFileSync(p.path, "utf8") };
  }
  async writeTextFile(p) {
    summary.writes++;
    buffers.set(p.path, p.content);
    return {};
  }
}

// start spawns one daemon and connects the SDK's client to it; n tags the
// daemon's lines in the record.
function start(n, transcript) {
  const child = spawn(daemonPath, [], {
    env: { ...process.env, CLINE_LS_TRANSCRIPT: transcript },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const record = (from, chunk) => {
    for (const line of chunk.toString("utf8").split("\n")) {
      if (line.trim() !== "") appendFileSync(recordPath, JSON.stringify({ daemon: n, from, line }) + "\n");
    }
  };
  let pending = "";
  child.stdout.on("data", (chunk) => {
    pending += chunk.toString("utf8");
    const lines = pending.split("\n");
    pending = lines.pop();
    for (const l of lines) record("daemon", l);
  });
  const input = Readable.toWeb(child.stdout);
  const toDaemon = new Writable({
    write(chunk, enc, cb) {
      record("client", chunk);
      child.stdin.write(chunk, cb);
    },
    final(cb) {
      child.stdin.end(cb);
    },
  });
  const conn = new acp.ClientSideConnection(() => new Client(), acp.ndJsonStream(Writable.toWeb(toDaemon), input));
  const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  return { conn, exited, stop: () => child.stdin.end() };
}

const init = {
  protocolVersion: acp.PROTOCOL_VERSION,
  clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
};

const first = start(1, transcriptNew);
const initRes = await first.conn.initialize(init);
summary.sessionCapabilities = initRes.agentCapabilities?.sessionCapabilities ?? null;
const created = await first.conn.newSession({ cwd, mcpServers: [] });
const { sessionId } = created;
summary.configOptions = (created.configOptions ?? []).map((o) => o.id);
first.stop();
summary.exit1 = await first.exited;

const second = start(2, transcriptPrompts);
await second.conn.initialize(init);
await second.conn.loadSession({ sessionId, cwd, mcpServers: [] });
// The mode through ACP's config options, as a client that shows them sets it.
const set = await second.conn.setSessionConfigOption({ sessionId, configId: "mode", value: "act" });
summary.modeOption = set.configOptions.find((o) => o.id === "mode")?.currentValue ?? null;
const prompt = async (text) => {
  const r = await second.conn.prompt({ sessionId, prompt: [{ type: "text", text }] });
  summary.stopReasons.push(r.stopReason);
};
await prompt("fix the notes");
answer = "reject_once";
await prompt("once more");
// The third edit's permission stays pending until the turn is cancelled;
// then the client answers "cancelled", as ACP asks of it.
onPermission = async () => {
  await second.conn.cancel({ sessionId });
  return { outcome: { outcome: "cancelled" } };
};
await prompt("and stop");
await second.conn.closeSession({ sessionId });
try {
  await second.conn.prompt({ sessionId, prompt: [{ type: "text", text: "after close" }] });
  summary.errors.push("a closed session took a prompt");
} catch (e) {
  summary.closedError = String(e?.message ?? e);
}
second.stop();
summary.exit2 = await second.exited;
summary.buffer = buffers.get(notes);
process.stdout.write(JSON.stringify(summary) + "\n");
