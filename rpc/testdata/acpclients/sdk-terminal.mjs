// An ACP client on the TypeScript SDK that offers terminals, driven by
// rpc's TestACPTerminalWithTypeScriptSDK. Its createTerminal runs the
// command for real (child_process, its own process group) and keeps the
// output within outputByteLimit; wait, output, kill and release act on it.
//
//   node sdk-terminal.mjs <daemon> <cwd> <record.jsonl> <transcript> [stdin|sigterm]
//
// Flow: one session in yolo; a prompt whose command runs to its end, then
// one whose command is cancelled once its terminal shows in the tool
// call. With an exit mode (TestACPTerminalsReleasedAtExit): two sessions
// whose prompts each run a command that does not end, and once both
// terminals show, the daemon is ended by closing its stdin or by SIGTERM;
// the summary then says which terminals were left open and which of
// their commands still run. It prints a JSON summary on stdout; the Go
// test checks it and the record.
import { spawn } from "node:child_process";
import { appendFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [daemonPath, cwd, recordPath, transcript, exitMode] = process.argv.slice(2);
writeFileSync(recordPath, "");

const summary = { pid: process.pid, stopReasons: [], requests: [], creates: [], shown: [], killedRunning: [], promptErrors: [] };
const terminals = new Map();
const released = [];
let next = 0;
let onShown = null;

class Client {
  async requestPermission() {
    return { outcome: { outcome: "selected", optionId: "allow_once" } };
  }
  async sessionUpdate(n) {
    const u = n.update;
    if (u.sessionUpdate !== "tool_call" && u.sessionUpdate !== "tool_call_update") return;
    for (const c of u.content ?? []) {
      if (c.type === "terminal") {
        summary.shown.push({ terminalId: c.terminalId, status: u.status ?? null });
        if (onShown) onShown(c.terminalId);
      }
    }
  }
  async createTerminal(p) {
    const id = `term-${++next}`;
    summary.requests.push(["create", id]);
    summary.creates.push(p);
    const env = { ...process.env };
    for (const e of p.env ?? []) env[e.name] = e.value;
    const child = spawn(p.command, p.args ?? [], { cwd: p.cwd ?? undefined, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const t = { child, out: "", exit: null, limit: p.outputByteLimit ?? Infinity, truncated: false };
    t.exited = new Promise((resolve) =>
      child.on("exit", (code, signal) => {
        t.exit = { exitCode: code, signal };
        resolve(t.exit);
      }),
    );
    const keep = (chunk) => {
      t.out += chunk.toString("utf8");
      if (Buffer.byteLength(t.out) > t.limit) {
        t.out = t.out.slice(t.out.length - t.limit);
        t.truncated = true;
      }
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    terminals.set(id, t);
    return { terminalId: id };
  }
  async waitForTerminalExit(p) {
    summary.requests.push(["wait_for_exit", p.terminalId]);
    return await terminals.get(p.terminalId).exited;
  }
  async terminalOutput(p) {
    summary.requests.push(["output", p.terminalId]);
    const t = terminals.get(p.terminalId);
    return { output: t.out, truncated: t.truncated, exitStatus: t.exit };
  }
  async killTerminal(p) {
    summary.requests.push(["kill", p.terminalId]);
    const t = terminals.get(p.terminalId);
    if (t.exit === null) {
      summary.killedRunning.push(p.terminalId);
      process.kill(-t.child.pid, "SIGKILL");
      await t.exited;
    }
    return {};
  }
  async releaseTerminal(p) {
    summary.requests.push(["release", p.terminalId]);
    const t = terminals.get(p.terminalId);
    if (t.exit === null) process.kill(-t.child.pid, "SIGKILL");
    terminals.delete(p.terminalId);
    released.push(t);
    return {};
  }
}

const child = spawn(daemonPath, [], { env: { ...process.env, CLINE_LS_TRANSCRIPT: transcript }, stdio: ["pipe", "pipe", "inherit"] });
let pending = "";
const record = (from, line) => appendFileSync(recordPath, JSON.stringify({ daemon: 1, from, line }) + "\n");
child.stdout.on("data", (chunk) => {
  pending += chunk.toString("utf8");
  const lines = pending.split("\n");
  pending = lines.pop();
  for (const l of lines) if (l.trim() !== "") record("daemon", l);
});
const toDaemon = new Writable({
  write(chunk, enc, cb) {
    for (const l of chunk.toString("utf8").split("\n")) if (l.trim() !== "") record("client", l);
    child.stdin.write(chunk, cb);
  },
  final(cb) {
    child.stdin.end(cb);
  },
});
const conn = new acp.ClientSideConnection(() => new Client(), acp.ndJsonStream(Writable.toWeb(toDaemon), Readable.toWeb(child.stdout)));
const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));

await conn.initialize({ protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: { terminal: true } });
if (exitMode) {
  const ids = [];
  for (let i = 0; i < 2; i++) ids.push((await conn.newSession({ cwd, mcpServers: [] })).sessionId);
  const seen = new Set();
  const bothShown = new Promise((resolve) => {
    onShown = (id) => {
      seen.add(id);
      if (seen.size === 2) resolve();
    };
  });
  const prompts = ids.map((sessionId) =>
    conn.prompt({ sessionId, prompt: [{ type: "text", text: "run the server" }] }).then(
      (r) => summary.stopReasons.push(r.stopReason),
      (e) => summary.promptErrors.push(String(e?.message ?? e)),
    ),
  );
  await bothShown;
  const pids = [...terminals.values()].map((t) => t.child.pid);
  const ending = Date.now();
  if (exitMode === "stdin") child.stdin.end();
  else child.kill("SIGTERM");
  summary.exit = await exited;
  summary.exitMs = Date.now() - ending; // reported, not checked
  void prompts; // the daemon is gone: they get no answer
  summary.open = [...terminals.keys()];
  // A released terminal's command was killed: it is gone once reaped.
  await Promise.all(released.map((t) => t.exited));
  summary.running = pids.filter(groupRuns);
  process.stdout.write(JSON.stringify(summary) + "\n");
  process.exit(0);
}
const { sessionId } = await conn.newSession({ cwd, mcpServers: [] });
const prompt = async (text) => {
  const r = await conn.prompt({ sessionId, prompt: [{ type: "text", text }] });
  summary.stopReasons.push(r.stopReason);
};
await prompt("run it");
onShown = () => {
  onShown = null;
  conn.cancel({ sessionId });
};
await prompt("run the long one");
child.stdin.end();
summary.exit = await exited;
summary.open = [...terminals.keys()];
process.stdout.write(JSON.stringify(summary) + "\n");

// groupRuns says whether a process of the group pgid still runs. A killed
// command's own children are reaped by whoever adopted them, perhaps never
// in a test: on Linux a zombie does not count.
function groupRuns(pgid) {
  if (!existsSync("/proc/self/stat")) {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  }
  for (const name of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(name)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue; // gone meanwhile
    }
    // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(pgrp) === pgid && state !== "Z") return true;
  }
  return false;
}
