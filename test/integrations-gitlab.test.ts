// The reference integrations that k8s.yaml ships, run as their Jobs run
// them (node, the ConfigMap's files, the environment sync gives them)
// against stand-ins on 127.0.0.1: GitLab's REST API v4, answering as
// GitLab documents it, its errors too, and the Kubernetes API they write to.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, beforeEach, describe, test } from "node:test";
import { INTEGRATIONS_NAMESPACE, OUTPUTS_ANNOTATION } from "../features/integrations.ts";
import { readManifest } from "./manifest.ts";

const TOKEN = "glpat-stand-in";
const programs = readManifest().find("ConfigMap", "gitlab-integrations");

type Call = { method: string; path: string; body?: any };
type User = { id: number; username: string };
/** GitLab as far as the programs use it: projects, their members, users and runners. */
function gitlabStandIn() {
  const state = {
    calls: [] as Call[],
    users: [
      { id: 1, username: "project-bot" },
      { id: 2, username: "alice" },
      { id: 3, username: "bob" },
      { id: 4, username: "dave" },
    ] as User[],
    groups: [{ id: 10, full_path: "teams" }],
    projects: [] as { id: number; path_with_namespace: string; web_url: string; visibility: string; members: Map<number, number> }[],
    runners: new Map<number, { project: number; description: string }>(),
    /** The next call matching this answers so, as GitLab does when it is down. */
    failing: undefined as { method: string; path: RegExp; status: number } | undefined,
  };
  const handle = (request: IncomingMessage, body: any, reply: (status: number, body?: unknown) => void) => {
    const url = new URL(request.url ?? "/", "http://gitlab");
    const path = decodeURIComponent(url.pathname.replace(/^\/api\/v4\//, ""));
    state.calls.push({ method: request.method ?? "", path: `${path}${url.search}`, ...(body === undefined ? {} : { body }) });
    if (request.headers["private-token"] !== TOKEN) return reply(401, { message: "401 Unauthorized" });
    if (state.failing && state.failing.method === request.method && state.failing.path.test(path)) {
      const { status } = state.failing;
      state.failing = undefined;
      return reply(status, { message: `${status} stand-in failure` });
    }
    const project = (key: string) => state.projects.find((each) => String(each.id) === key || each.path_with_namespace === key);
    let match: RegExpMatchArray | null;
    if (request.method === "GET" && path === "user") return reply(200, state.users[0]);
    if (request.method === "GET" && path === "users") return reply(200, state.users.filter((user) => user.username === url.searchParams.get("username")));
    if (request.method === "GET" && (match = path.match(/^groups\/(.+)$/))) {
      const group = state.groups.find((each) => each.full_path === match![1]);
      return group ? reply(200, group) : reply(404, { message: "404 Group Not Found" });
    }
    if (request.method === "POST" && path === "projects") {
      const group = state.groups.find((each) => each.id === body.namespace_id)!;
      const created = { id: 100 + state.projects.length, path_with_namespace: `${group.full_path}/${body.path}`, web_url: `https://gitlab.example/${group.full_path}/${body.path}`, visibility: body.visibility, members: new Map([[1, 50]]) };
      state.projects.push(created);
      return reply(201, { ...created, members: undefined });
    }
    if ((match = path.match(/^projects\/([^/]+(?:\/[^/]+)?)$/)) && !path.includes("/members")) {
      const found = project(match[1]!);
      if (!found) return reply(404, { message: "404 Project Not Found" });
      if (request.method === "DELETE") {
        state.projects.splice(state.projects.indexOf(found), 1);
        return reply(202, { message: "202 Accepted" });
      }
      return reply(200, { ...found, members: undefined });
    }
    if ((match = path.match(/^projects\/(\d+)\/members(?:\/(\d+))?$/))) {
      const found = project(match[1]!)!;
      const user = Number(match[2] ?? body?.user_id);
      const listed = [...found.members].map(([id, access_level]) => ({ id, username: state.users.find((each) => each.id === id)?.username, access_level }));
      if (request.method === "GET") {
        const page = Number(url.searchParams.get("page") ?? 1);
        const perPage = Number(url.searchParams.get("per_page") ?? 20);
        return reply(200, listed.slice((page - 1) * perPage, page * perPage));
      }
      if (request.method === "POST") {
        if (found.members.has(user)) return reply(409, { message: "Member already exists" });
        found.members.set(user, body.access_level);
        return reply(201, {});
      }
      if (request.method === "PUT") return found.members.set(user, body.access_level), reply(200, {});
      if (request.method === "DELETE") return found.members.delete(user), reply(204);
    }
    if (request.method === "POST" && path === "user/runners") {
      const id = 500 + state.runners.size;
      state.runners.set(id, { project: body.project_id, description: body.description });
      return reply(201, { id, token: `glrt-secret-${id}` });
    }
    if ((match = path.match(/^runners\/(\d+)$/))) {
      const id = Number(match[1]);
      if (!state.runners.has(id)) return reply(404, { message: "404 Not found" });
      if (request.method === "DELETE") return state.runners.delete(id), reply(204);
      return reply(200, { id, ...state.runners.get(id) });
    }
    reply(404, { error: "404 Not Found" });
  };
  return { state, handle };
}

/** The API server, as far as the programs use it: their Job's annotation, and the one Secret. */
function kubernetesStandIn() {
  const state = { calls: [] as Call[], secrets: new Map<string, any>(), jobAnnotations: new Map<string, Record<string, string>>(), refusingSecrets: false };
  const handle = (request: IncomingMessage, body: any, reply: (status: number, body?: unknown) => void) => {
    const path = request.url ?? "/";
    state.calls.push({ method: request.method ?? "", path, ...(body === undefined ? {} : { body }) });
    if (request.headers.authorization !== "Bearer sa-token") return reply(401, { kind: "Status", code: 401 });
    let match: RegExpMatchArray | null;
    if ((match = path.match(/^\/apis\/batch\/v1\/namespaces\/([^/]+)\/jobs\/([^/]+)$/)) && request.method === "PATCH") {
      assert.equal(request.headers["content-type"], "application/merge-patch+json");
      state.jobAnnotations.set(`${match[1]}/${match[2]}`, body.metadata.annotations);
      return reply(200, {});
    }
    if ((match = path.match(/^\/api\/v1\/namespaces\/([^/]+)\/secrets(?:\/([^/]+))?$/))) {
      const key = `${match[1]}/${match[2] ?? body?.metadata?.name}`;
      const stored = state.secrets.get(key);
      if (request.method === "GET") return stored ? reply(200, stored) : reply(404, { kind: "Status", code: 404 });
      if (state.refusingSecrets) return reply(403, { kind: "Status", code: 403, message: "secrets is forbidden" });
      if (request.method === "POST" && stored) return reply(409, { kind: "Status", code: 409 });
      if (request.method === "PUT" && !stored) return reply(404, { kind: "Status", code: 404 });
      const data = Object.fromEntries(Object.entries<string>(body.stringData).map(([name, value]) => [name, Buffer.from(value).toString("base64")]));
      state.secrets.set(key, { ...body, stringData: undefined, data, metadata: { ...body.metadata, resourceVersion: String(state.calls.length) } });
      return reply(request.method === "POST" ? 201 : 200, {});
    }
    reply(404, { kind: "Status", code: 404 });
  };
  return { state, handle };
}

function serve(handle: (request: IncomingMessage, body: any, reply: (status: number, body?: unknown) => void) => void): Promise<Server> {
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let text = "";
    request.on("data", (chunk) => (text += chunk));
    request.on("end", () => {
      const reply = (status: number, body?: unknown) => {
        response.writeHead(status, body === undefined ? {} : { "Content-Type": "application/json" });
        response.end(body === undefined ? undefined : JSON.stringify(body));
      };
      try {
        handle(request, text ? JSON.parse(text) : undefined, reply);
      } catch (error) {
        reply(500, { message: String(error) });
      }
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}
const urlOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

describe("the reference GitLab integrations, against a stand-in GitLab", () => {
  let gitlab: ReturnType<typeof gitlabStandIn>;
  let kubernetes: ReturnType<typeof kubernetesStandIn>;
  let servers: Server[] = [];
  let directory = "";
  let gitlabUrl = "";
  let kubernetesUrl = "";

  before(async () => {
    directory = mkdtempSync(join(tmpdir(), "integrations-"));
    for (const [file, text] of Object.entries<string>(programs.data)) writeFileSync(join(directory, file), text);
    writeFileSync(join(directory, "token"), "sa-token\n");
    writeFileSync(join(directory, "namespace"), `${INTEGRATIONS_NAMESPACE}\n`);
    servers = [await serve((...args) => gitlab.handle(...args)), await serve((...args) => kubernetes.handle(...args))];
    [gitlabUrl, kubernetesUrl] = servers.map(urlOf) as [string, string];
  });
  beforeEach(() => {
    gitlab = gitlabStandIn();
    kubernetes = kubernetesStandIn();
  });
  after(() => {
    for (const server of servers) server.close();
    rmSync(directory, { recursive: true, force: true });
  });

  /** One run of a program, as its Job's container runs it. */
  function run(program: string, action: "run" | "teardown", env: Record<string, string> = {}): Promise<{ code: number; stderr: string }> {
    const environment = {
      PATH: process.env["PATH"] ?? "",
      GITLAB_URL: gitlabUrl,
      GITLAB_TOKEN: TOKEN,
      GITLAB_GROUP: "teams",
      PROJECT: "shop",
      PROJECT_NAMESPACE: "proj-shop",
      INTEGRATION: program,
      ACTION: action,
      JOB_NAME: `shop-${program}-abc`,
      SERVICE_ACCOUNT: program,
      PARAMETERS: "{}",
      KUBERNETES_API: kubernetesUrl,
      SERVICE_ACCOUNT_DIR: directory,
      ...env,
    };
    return new Promise((resolve) => {
      execFile(process.execPath, [join(directory, `${program}.mjs`)], { env: environment, timeout: 20_000 }, (error, _stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stderr }),
      );
    });
  }
  const reported = (program: string) => JSON.parse(kubernetes.state.jobAnnotations.get(`${INTEGRATIONS_NAMESPACE}/shop-${program}-abc`)?.[OUTPUTS_ANNOTATION] ?? "null");
  const MEMBERS = JSON.stringify([
    { kind: "User", name: "alice@example.com", role: "admin" },
    { kind: "User", name: "bob", role: "view" },
    { kind: "User", name: "carol@example.com", role: "edit" },
    { kind: "User", name: "dave@example.com", role: "edit" },
    { kind: "Group", name: "ops", role: "edit" },
  ]);

  test("the repository is created in the group with the visibility asked, members at the access their role gives, and its URL reported", async () => {
    const result = await run("gitlab-repository", "run", { MEMBERS, PARAMETERS: '{"visibility":"internal"}' });
    assert.equal(result.code, 0, result.stderr);
    const [repository] = gitlab.state.projects;
    assert.deepEqual([repository?.path_with_namespace, repository?.visibility], ["teams/shop", "internal"]);
    assert.deepEqual(Object.fromEntries(repository!.members), { 1: 50, 2: 40, 3: 20, 4: 30 });
    assert.deepEqual(reported("gitlab-repository"), { url: "https://gitlab.example/teams/shop", notInGitLab: "carol" });
  });

  test("run again, it creates nothing: a changed role is updated, a removed member loses access, the token's own user stays", async () => {
    assert.equal((await run("gitlab-repository", "run", { MEMBERS })).code, 0);
    const changed = JSON.stringify([{ kind: "User", name: "bob", role: "admin" }]);
    const result = await run("gitlab-repository", "run", { MEMBERS: changed });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(gitlab.state.projects.length, 1);
    assert.deepEqual(Object.fromEntries(gitlab.state.projects[0]!.members), { 1: 50, 3: 40 });
    assert.equal(gitlab.state.calls.filter((call) => call.method === "POST" && call.path === "projects").length, 1);
  });

  test("a visibility GitLab does not know fails the run, before any call", async () => {
    const result = await run("gitlab-repository", "run", { PARAMETERS: '{"visibility":"secret"}' });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /gitlab-repository run for Project shop: parameter visibility is secret, not one of private, internal, public/);
    assert.deepEqual(gitlab.state.calls, []);
  });

  test("GitLab's refusals fail the run, naming the call and GitLab's answer, and never the token", async () => {
    const refused = await run("gitlab-repository", "run", { GITLAB_TOKEN: "wrong" });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /GET \/api\/v4\/projects\/teams%2Fshop answered 401: \{"message":"401 Unauthorized"\}/);
    assert.ok(!refused.stderr.includes("wrong") && !refused.stderr.includes(TOKEN));
    gitlab.state.failing = { method: "POST", path: /^projects$/, status: 500 };
    const down = await run("gitlab-repository", "run");
    assert.equal(down.code, 1);
    assert.match(down.stderr, /POST \/api\/v4\/projects answered 500/);
    assert.equal(reported("gitlab-repository"), null, "nothing reported");
  });

  test("a setting missing is named, and nothing is called", async () => {
    const result = await run("gitlab-repository", "run", { GITLAB_GROUP: "" });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /GITLAB_GROUP is not set/);
    assert.deepEqual(gitlab.state.calls, []);
  });

  test("a group GitLab does not have fails the run with GitLab's 404, and makes nothing", async () => {
    const result = await run("gitlab-repository", "run", { GITLAB_GROUP: "nobody" });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /GET \/api\/v4\/groups\/nobody answered 404: \{"message":"404 Group Not Found"\}/);
    assert.deepEqual(gitlab.state.projects, []);
  });

  test("members past GitLab's first page of 100 are read too: every one the Project does not list loses access", async () => {
    assert.equal((await run("gitlab-repository", "run")).code, 0);
    const [repository] = gitlab.state.projects;
    for (let id = 1000; id < 1150; id++) {
      gitlab.state.users.push({ id, username: `user-${id}` });
      repository!.members.set(id, 30);
    }
    assert.equal((await run("gitlab-repository", "run")).code, 0);
    assert.deepEqual(Object.fromEntries(repository!.members), { 1: 50 });
    assert.ok(gitlab.state.calls.some((call) => call.path.endsWith("per_page=100&page=2")), "the second page was read");
  });

  test("the teardown deletes the repository, and succeeds when it is gone already", async () => {
    await run("gitlab-repository", "run");
    assert.equal((await run("gitlab-repository", "teardown")).code, 0);
    assert.deepEqual(gitlab.state.projects, []);
    assert.equal((await run("gitlab-repository", "teardown")).code, 0);
  });

  test("the runner fails until the repository is there, saying so", async () => {
    const result = await run("gitlab-runner", "run");
    assert.equal(result.code, 1);
    assert.match(result.stderr, /GitLab has no repository teams\/shop yet/);
    assert.equal(gitlab.state.runners.size, 0);
  });

  test("the runner is registered for the repository, its token handed to the Project's Namespace and reported nowhere else", async () => {
    await run("gitlab-repository", "run");
    const result = await run("gitlab-runner", "run");
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual([...gitlab.state.runners.values()], [{ project: 100, description: "proj-shop" }]);
    const secret = kubernetes.state.secrets.get("proj-shop/gitlab-runner");
    assert.equal(Buffer.from(secret.data.token, "base64").toString(), "glrt-secret-500");
    assert.deepEqual(reported("gitlab-runner"), { runner: "500" });
    const everywhereElse = JSON.stringify([kubernetes.state.jobAnnotations.get(`${INTEGRATIONS_NAMESPACE}/shop-gitlab-runner-abc`), result.stderr]);
    assert.ok(!everywhereElse.includes("glrt-secret"), everywhereElse);
  });

  test("run again, the runner is kept; once deleted in GitLab, a new one is registered and the Secret updated", async () => {
    await run("gitlab-repository", "run");
    await run("gitlab-runner", "run");
    assert.equal((await run("gitlab-runner", "run")).code, 0);
    assert.equal(gitlab.state.runners.size, 1);
    gitlab.state.runners.clear();
    assert.equal((await run("gitlab-runner", "run")).code, 0);
    assert.deepEqual([...gitlab.state.runners.keys()], [500]);
    const secret = kubernetes.state.secrets.get("proj-shop/gitlab-runner");
    assert.equal(Buffer.from(secret.data.id, "base64").toString(), "500");
    assert.ok(kubernetes.state.calls.some((call) => call.method === "PUT"), "the Secret is replaced, not created twice");
  });

  test("a runner whose token cannot be handed over is deleted again, and the run fails saying why", async () => {
    await run("gitlab-repository", "run");
    kubernetes.state.refusingSecrets = true;
    const result = await run("gitlab-runner", "run");
    assert.equal(result.code, 1);
    assert.match(result.stderr, /POST \/api\/v1\/namespaces\/proj-shop\/secrets answered 403/);
    assert.equal(gitlab.state.runners.size, 0);
    assert.ok(!result.stderr.includes("glrt-secret"), "the token is in no log");
  });

  test("the runner's teardown deletes the runner it handed over", async () => {
    await run("gitlab-repository", "run");
    await run("gitlab-runner", "run");
    assert.equal((await run("gitlab-runner", "teardown")).code, 0);
    assert.equal(gitlab.state.runners.size, 0);
  });
});
