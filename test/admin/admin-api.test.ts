/**
 * The admin API (`/v1/admin/…`) on a real gateway answering through the model simulator: each
 * view after real work (a chat, a cron job, a pairing request, a cooling profile, an assignment
 * waiting on a question), each action and its 404 when the thing is gone, the field checks, the
 * token, and the live stream.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LogTail } from "../../src/admin/log-tail.js";
import type {
  AccessView,
  AssignmentDetail,
  ModelsView,
  Overview,
  Scheduled,
  SessionDetail,
  SessionRow,
} from "../../src/admin/contract.js";
import { buildJob } from "../../src/cron/jobs.js";
import { ProviderError } from "../../src/harness/providers/provider-error.js";
import { askingAssignment } from "../helpers/assignment-fixture.js";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";
import { until } from "../helpers/until.js";

interface Answer<T> {
  status: number;
  body: T & { error?: { message: string; code: string; param: string | null } };
}

async function call<T>(
  gw: { url: string },
  path: string,
  init: { body?: unknown; token?: string } = {},
): Promise<Answer<T>> {
  const res = await fetch(`${gw.url}/v1/admin/${path}`, {
    method: init.body === undefined ? "GET" : "POST",
    headers: {
      ...(init.body === undefined ? {} : { "content-type": "application/json" }),
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  return { status: res.status, body: (await res.json()) as Answer<T>["body"] };
}

/** Reads SSE frames from a streaming response until `stop` says enough. */
async function readFrames(
  res: Response,
  stop: (frames: Array<{ event: string; data: unknown }>) => boolean,
): Promise<Array<{ event: string; data: unknown }>> {
  const frames: Array<{ event: string; data: unknown }> = [];
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  while (!stop(frames)) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (event && data) frames.push({ event, data: JSON.parse(data) });
      end = buffer.indexOf("\n\n");
    }
  }
  await reader.cancel();
  return frames;
}

describe("the admin API", () => {
  let sim: ModelSimulator;
  let gw: TestGateway;
  const logTail = new LogTail();

  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
    gw = await startTestGateway(simulatorConfig(sim, "openai"), { logTail });
  });
  afterAll(async () => {
    await gw?.stop();
    await sim?.close();
  });

  it("overview: readiness, model, channels, lanes, outbox, spend", async () => {
    const { status, body } = await call<Overview>(gw, "overview");
    expect(status).toBe(200);
    expect(body).toMatchObject({
      ready: true,
      model: "openai/gpt-test",
      simulated: false,
      lanes: { running: 0, slots: { busy: 0, total: 4, reservedForHuman: 1 } },
      outbox: { pending: 0, dead: 0 },
      cooling: [],
    });
    expect(body.channels.map((c) => `${c.name}:${c.state}`)).toContain("http:ok");
    expect(body.spend.day).toMatch(/^\d{4}-\d\d-\d\d$/);
  });

  it("sessions and a session's thread after a chat; stop and reset; a session gone is a 404", async () => {
    sim.script({ toolCalls: [{ name: "list_files", args: { path: "." } }] }, { text: "Nothing much here." });
    const chat = await gw.chat("ann", "what is in my workspace?");
    expect(chat.status).toBe(200);
    const key = chat.body.sessionKey as string;
    const list = await call<{ sessions: SessionRow[] }>(gw, "sessions");
    expect(list.body.sessions[0]).toMatchObject({
      sessionKey: key,
      channel: "http",
      state: "idle",
      messages: 3,
    });
    expect(list.body.sessions[0]?.tokensToday).toBeGreaterThan(0);
    const detail = await call<SessionDetail>(gw, `session?key=${encodeURIComponent(key)}`);
    expect(detail.body.thread.map((i) => i.kind)).toEqual(["user", "tool_call", "tool_result", "assistant"]);
    expect(detail.body.thread[1]).toMatchObject({ name: "list_files", args: '{"path":"."}' });
    expect(detail.body.runs).toHaveLength(1);
    expect(detail.body.runs[0]).toMatchObject({ trigger: "user", outcome: "answered", toolCalls: 1 });
    expect((await call(gw, "session/stop", { body: { key } })).body).toEqual({ stopped: false });
    const reset = await call<{ sessionId: string }>(gw, "session/reset", { body: { key } });
    expect(reset.body.sessionId).not.toBe(detail.body.session.sessionId);
    expect((await call<SessionDetail>(gw, `session?key=${encodeURIComponent(key)}`)).body.thread).toEqual([]);
    const gone = await call(gw, "session/stop", { body: { key: "agent:main:nope" } });
    expect(gone.status).toBe(404);
    expect(gone.body.error?.message).toBe('session "agent:main:nope" does not exist (any more)');
    // The write was logged with what it changed.
    expect(
      logTail.lines("info").some((l) => l.msg === "admin: started a new session" && l.fields.includes(key)),
    ).toBe(true);
  });

  it("refuses bad fields with a 400 naming the field", async () => {
    const noKey = await call(gw, "session?limit=5");
    expect([noKey.status, noKey.body.error?.param]).toEqual([400, "key"]);
    const badLimit = await call(gw, "sessions?limit=0");
    expect(badLimit.body.error?.message).toBe('limit: expected an integer from 1 to 10000, got "0"');
    const badBy = await call(gw, "usage?by=week");
    expect(badBy.body.error?.message).toBe('by: expected one of day, model, origin, got "week"');
    const badEnable = await call(gw, "cron/enable", { body: { id: 1, enabled: "yes" } });
    expect([badEnable.status, badEnable.body.error?.param]).toEqual([400, "enabled"]);
  });

  it("scheduled: a job run now runs and its ledger row appears; disable; a deleted job is a 404", async () => {
    const store = gw.running.store;
    const now = Date.now();
    const { spec, nextRunAt } = buildJob(
      { name: "digest", every: "6h", message: "Write the digest", deliver: "none" },
      { agentId: "main", source: "cli", now, defaultTz: "UTC", channels: new Set() },
    );
    const job = await store.cron.add(spec, nextRunAt, now);
    const before = await call<Scheduled>(gw, "cron");
    expect(before.body.jobs).toEqual([
      expect.objectContaining({
        id: job.id,
        name: "digest",
        schedule: "every 6h",
        enabled: true,
        lastRun: null,
      }),
    ]);
    sim.script({ text: "Digest written." });
    expect((await call(gw, "cron/run", { body: { id: job.id } })).body).toMatchObject({ queued: true });
    await until(async () => (await store.cron.history(job.id, 1))[0]?.state === "ok", "the job's run");
    const runs = await call<{ runs: Array<{ state: string }> }>(gw, `cron/runs?job=${job.id}`);
    expect(runs.body.runs.map((r) => r.state)).toEqual(["ok"]);
    const off = await call<{ job: { enabled: boolean; nextRunAt: number | null } }>(gw, "cron/enable", {
      body: { id: job.id, enabled: false },
    });
    expect(off.body.job).toMatchObject({ enabled: false, nextRunAt: null });
    await store.cron.remove(job.id);
    const gone = await call(gw, "cron/run", { body: { id: job.id } });
    expect([gone.status, gone.body.error?.message]).toEqual([
      404,
      `cron job #${job.id} does not exist (any more)`,
    ]);
  });

  it("access: a pending request is approved (the sender is let in) or denied (gone)", async () => {
    const store = gw.running.store;
    const opts = { ttlMs: 3_600_000, maxPending: 3 };
    const who = { channel: "telegram", accountId: "default", senderName: "Bob" };
    await store.pairing.request({ ...who, senderId: "7", code: "BOBB2345" }, opts, Date.now());
    await store.pairing.request(
      { ...who, senderId: "8", code: "EVEE2345", senderName: "Eve" },
      opts,
      Date.now(),
    );
    const view = await call<AccessView>(gw, "access");
    expect(view.body.pending.map((p) => p.code)).toEqual(["BOBB2345", "EVEE2345"]);
    const ok = await call(gw, "access/approve", { body: { channel: "telegram", code: "bobb2345" } });
    expect(ok.body).toMatchObject({ approved: { channel: "telegram", senderId: "7", senderName: "Bob" } });
    expect(await store.pairing.isApproved("telegram", "7")).toBe(true);
    expect((await call(gw, "access/deny", { body: { channel: "telegram", code: "EVEE2345" } })).body).toEqual(
      {
        denied: true,
      },
    );
    expect(await store.pairing.isApproved("telegram", "8")).toBe(false);
    const again = await call(gw, "access/approve", { body: { channel: "telegram", code: "EVEE2345" } });
    expect(again.status).toBe(404);
    expect((await call<AccessView>(gw, "access")).body).toMatchObject({
      pending: [],
      approved: [{ senderId: "7" }],
    });
  });

  it("models: a cooling profile is listed and reset; an unknown profile is a 404", async () => {
    const router = gw.running.models;
    router.authProfiles.failed(
      "openai",
      "default",
      new ProviderError("rate_limit", "429 Too Many Requests", { retryAfterMs: 600_000 }),
    );
    const view = await call<ModelsView>(gw, "models");
    expect(view.body.profiles).toEqual([expect.objectContaining({ provider: "openai", state: "cooling" })]);
    expect(view.body.chain).toEqual(["openai/gpt-test"]);
    const reset = await call<{ profile: { state: string } }>(gw, "models/reset", {
      body: { provider: "openai", profileId: "default" },
    });
    expect(reset.body.profile.state).toBe("ok");
    expect(router.authProfiles.coolingUntil("openai", "default")).toBe(0);
    const gone = await call(gw, "models/reset", { body: { provider: "openai", profileId: "spare" } });
    expect(gone.status).toBe(404);
  });

  it("assignments: the question waiting is shown, the answer resumes it, cancel ends it", async () => {
    const store = gw.running.store;
    const now = Date.now();
    const a = askingAssignment("Which colour?", ["red", "blue"], now);
    await store.assignments.create(a);
    const list = await call<{ assignments: Array<{ id: string; question: string | null }> }>(
      gw,
      "assignments",
    );
    expect(list.body.assignments).toEqual([expect.objectContaining({ id: a.id, question: "Which colour?" })]);
    const detail = await call<AssignmentDetail>(gw, `assignment?id=${a.id}`);
    expect(detail.body.assignment).toMatchObject({ state: "requires_action", options: ["red", "blue"] });
    sim.setDefault(() => ({ text: "Painted it blue." }));
    expect((await call(gw, "assignment/answer", { body: { id: a.id, text: "blue" } })).body).toEqual({
      resumed: true,
    });
    expect((await store.assignments.get(a.id))?.question?.answer).toBe("blue");
    const twice = await call(gw, "assignment/answer", { body: { id: a.id, text: "red" } });
    expect(twice.status).toBe(409);
    await until(
      async () => (await store.assignments.runs(a.id, 1)).length === 1,
      "the run the answer queued",
    );
    expect((await call(gw, "assignment/cancel", { body: { id: a.id } })).body).toEqual({
      state: "cancelled",
    });
    const gone = await call(gw, "assignment?id=tnope");
    expect(gone.status).toBe(404);
  });

  it("logs: the tail, filtered by level", async () => {
    const all = await call<{ lines: Array<{ level: string; msg: string }> }>(
      gw,
      "logs?level=info&limit=1000",
    );
    expect(all.body.lines.some((l) => l.msg === "gateway ready")).toBe(true);
    const warn = await call<{ lines: Array<{ level: string }> }>(gw, "logs?level=error");
    expect(warn.body.lines.every((l) => l.level === "error" || l.level === "fatal")).toBe(true);
  });

  it("the live stream sends the overview at once, then each session that changes", async () => {
    const controller = new AbortController();
    const res = await fetch(`${gw.url}/v1/admin/events`, { signal: controller.signal });
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    sim.script({ text: "Hello Cy." });
    let sent = false;
    const frames = await readFrames(res, (f) => {
      if (!sent && f.some((x) => x.event === "overview")) {
        sent = true;
        gw.chat("cy", "hi").catch(() => {});
      }
      return f.some((x) => x.event === "session" && (x.data as { state: string }).state === "idle");
    });
    controller.abort();
    expect(frames[0]?.event).toBe("overview");
    const sessions = frames
      .filter((f) => f.event === "session")
      .map((f) => f.data as { sessionKey: string; state: string });
    expect(sessions[0]?.sessionKey).toMatch(/cy$/);
    expect(sessions.map((s) => s.state)).toContain("running");
  });
});

describe("the admin API behind gateway.auth.token", () => {
  it("answers 401 without the token or with a wrong one, 200 with it", async () => {
    const sim = new ModelSimulator();
    await sim.start();
    const gw = await startTestGateway({
      ...simulatorConfig(sim, "openai"),
      gateway: { auth: { token: "s3cret-token-0123456789" } },
    });
    try {
      const none = await call(gw, "overview");
      expect([none.status, none.body.error?.code]).toEqual([401, "missing_token"]);
      expect((await call(gw, "overview", { token: "wrong" })).body.error?.code).toBe("invalid_token");
      expect((await call(gw, "overview", { token: "s3cret-token-0123456789" })).status).toBe(200);
      const stream = await fetch(`${gw.url}/v1/admin/events`);
      expect(stream.status).toBe(401);
      await stream.body?.cancel();
    } finally {
      await gw.stop();
      await sim.close();
    }
  });
});
