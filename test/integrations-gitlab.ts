// The tests of the reference integrations that k8s.yaml ships, which
// test/integrations-gitlab-repository.test.ts and -runner.test.ts run: each
// program run as its Job runs it (node, the ConfigMap's files, the
// environment sync gives them) against stand-ins on 127.0.0.1: GitLab's REST API v4, answering as
// GitLab documents it, its errors too, and the Kubernetes API they write to,
// which records every call. The tests play sync too: each run is a new Job,
// told what each integration's Job last reported (REPORTS), as the Project's
// status keeps them, and which it runs after (AFTER).
// The tenant is hostile: the Project's members may write anything in the
// Project's Namespace and edit their repository, and Project names come back.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, beforeEach, describe, test } from "node:test";
import { INTEGRATIONS_NAMESPACE, OUTPUTS_ANNOTATION } from "../features/integrations.ts";
import { escaped, namespaceOf } from "./helpers.ts";
import { readManifest } from "../scripts/manifest.ts";

const TOKEN = "glpat-stand-in";
// Project shop's Namespace, which its Jobs are told and write their hand-over into.
const SHOP = namespaceOf("shop");
const PROJECT_UID = "3f0c9a52-7d1e-4b8a-9c61-5e2f8d4a7b10";
const programs = readManifest().find("ConfigMap", "gitlab-integrations");

type Call = { method: string; path: string; body?: any };
type User = { id: number; username: string };
type Repository = { id: number; path_with_namespace: string; web_url: string; visibility: string; description?: string; members: Map<number, number> };
type Runner = { runner_type: string; projects: number[]; description: string; hidden?: boolean };
/** GitLab as far as the programs use it: projects, their members, users and runners. Ids are never reused. */
function gitlabStandIn() {
  const state = {
    calls: [] as Call[],
    users: [
      { id: 1, username: "project-bot" },
      { id: 2, username: "alice" },
      { id: 3, username: "bob" },
      { id: 4, username: "dave" },
      { id: 5, username: "mallory" },
    ] as User[],
    groups: [{ id: 10, full_path: "teams" }],
    projects: [] as Repository[],
    nextProject: 100,
    runners: new Map<number, Runner>(),
    nextRunner: 500,
    /** The next call matching this answers so, as GitLab does when it is down. */
    failing: undefined as { method: string; path: RegExp; status: number } | undefined,
  };
  /** A repository someone else made, by hand or through another Project: GitLab's owner and Mallory as Maintainer. */
  const madeElsewhere = (path: string) => {
    const repository = { id: state.nextProject++, path_with_namespace: path, web_url: `https://gitlab.example/${path}`, visibility: "private", members: new Map([[1, 50], [5, 40]]) };
    state.projects.push(repository);
    return repository;
  };
  /** Another team's runner, on its own repository. */
  const runnerElsewhere = (repository: Repository, more: Partial<Runner> = {}) => {
    const id = state.nextRunner++;
    state.runners.set(id, { runner_type: "project_type", projects: [repository.id], description: namespaceOf("other"), ...more });
    return id;
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
    const project = (key: string) => state.projects.find((each) => String(each.id) === key || each.path_with_namespace.toLowerCase() === key.toLowerCase());
    const shown = ({ members: _members, ...repository }: Repository) => repository;
    let match: RegExpMatchArray | null;
    if (request.method === "GET" && path === "user") return reply(200, state.users[0]);
    if (request.method === "GET" && path === "users") return reply(200, state.users.filter((user) => user.username === url.searchParams.get("username")));
    if (request.method === "GET" && (match = path.match(/^groups\/(.+)$/))) {
      const group = state.groups.find((each) => each.full_path === match![1]);
      return group ? reply(200, group) : reply(404, { message: "404 Group Not Found" });
    }
    if (request.method === "POST" && path === "projects") {
      const group = state.groups.find((each) => each.id === body.namespace_id)!;
      const at = `${group.full_path}/${body.path}`;
      if (project(at)) return reply(400, { message: { path: ["has already been taken"] } });
      const created = { id: state.nextProject++, path_with_namespace: at, web_url: `https://gitlab.example/${at}`, visibility: body.visibility, description: body.description, members: new Map([[1, 50]]) };
      state.projects.push(created);
      return reply(201, shown(created));
    }
    if ((match = path.match(/^projects\/(.+)$/)) && !/\/members(\/\d+)?$/.test(path)) {
      const found = project(match[1]!);
      if (!found) return reply(404, { message: "404 Project Not Found" });
      if (request.method === "DELETE") {
        state.projects.splice(state.projects.indexOf(found), 1);
        return reply(202, { message: "202 Accepted" });
      }
      return reply(200, shown(found));
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
      const id = state.nextRunner++;
      state.runners.set(id, { runner_type: body.runner_type, projects: [body.project_id], description: body.description });
      return reply(201, { id, token: `glrt-secret-${id}`, token_expires_at: null });
    }
    if ((match = path.match(/^runners\/(\d+)$/))) {
      const id = Number(match[1]);
      const runner = state.runners.get(id);
      if (!runner) return reply(404, { message: "404 Not found" });
      if (runner.hidden) return reply(403, { message: "403 Forbidden" });
      if (request.method === "DELETE") return state.runners.delete(id), reply(204);
      // As GET /runners/:id documents it: a project runner lists the projects it is assigned to.
      const projects = runner.projects.map((each) => ({ id: each, path_with_namespace: project(String(each))?.path_with_namespace }));
      return reply(200, { id, description: runner.description, runner_type: runner.runner_type, active: true, paused: false, projects });
    }
    reply(404, { error: "404 Not Found" });
  };
  return { state, handle, madeElsewhere, runnerElsewhere };
}

/** The API server, as far as the programs use it: their Job, its annotation, and the one Secret. It records every call. */
function kubernetesStandIn() {
  const state = {
    calls: [] as Call[],
    secrets: new Map<string, any>(),
    jobAnnotations: new Map<string, Record<string, string>>(),
    refusingSecrets: false,
    /** The next call matching this answers so, as an API server does when it is down. */
    failing: undefined as { method: string; path: RegExp; status: number } | undefined,
  };
  const handle = (request: IncomingMessage, body: any, reply: (status: number, body?: unknown) => void) => {
    const path = request.url ?? "/";
    state.calls.push({ method: request.method ?? "", path, ...(body === undefined ? {} : { body }) });
    if (request.headers.authorization !== "Bearer sa-token") return reply(401, { kind: "Status", code: 401 });
    if (state.failing && state.failing.method === request.method && state.failing.path.test(path)) {
      const { status } = state.failing;
      state.failing = undefined;
      return reply(status, { kind: "Status", code: status, message: "stand-in failure" });
    }
    let match: RegExpMatchArray | null;
    if ((match = path.match(/^\/apis\/batch\/v1\/namespaces\/([^/]+)\/jobs\/([^/]+)$/))) {
      const key = `${match[1]}/${match[2]}`;
      if (request.method === "GET") return reply(200, { apiVersion: "batch/v1", kind: "Job", metadata: { name: match[2], namespace: match[1], annotations: state.jobAnnotations.get(key) ?? {} } });
      if (request.method === "PATCH") {
        assert.equal(request.headers["content-type"], "application/merge-patch+json");
        state.jobAnnotations.set(key, { ...state.jobAnnotations.get(key), ...body.metadata.annotations });
        return reply(200, {});
      }
    }
    if ((match = path.match(/^\/api\/v1\/namespaces\/([^/]+)\/secrets(?:\/([^/]+))?$/))) {
      const key = `${match[1]}/${match[2] ?? body?.metadata?.name}`;
      const stored = state.secrets.get(key);
      if (request.method === "GET") return stored ? reply(200, stored) : reply(404, { kind: "Status", code: 404 });
      if (state.refusingSecrets) return reply(403, { kind: "Status", code: 403, message: "secrets is forbidden" });
      if (request.method === "POST" && stored) return reply(409, { kind: "Status", code: 409, reason: "AlreadyExists" });
      if (request.method === "PUT" && !stored) return reply(404, { kind: "Status", code: 404 });
      const data = Object.fromEntries(Object.entries<string>(body.stringData).map(([name, value]) => [name, Buffer.from(value).toString("base64")]));
      state.secrets.set(key, { ...body, stringData: undefined, data, metadata: { ...body.metadata, resourceVersion: String(state.calls.length) } });
      return reply(request.method === "POST" ? 201 : 200, {});
    }
    reply(404, { kind: "Status", code: 404 });
  };
  /** What a member of the Project could write into its Namespace. */
  const plant = (name: string, data: Record<string, string>) =>
    state.secrets.set(`${SHOP}/${name}`, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name, namespace: SHOP, resourceVersion: "1" },
      data: Object.fromEntries(Object.entries(data).map(([key, value]) => [key, Buffer.from(value).toString("base64")])),
    });
  return { state, handle, plant };
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

/**
 * One part of the programs' tests, in order, with stand-ins of their own,
 * in the describe that calls it. Each part has a test file of its own (the
 * repository's tests are two): nearly all of their time is the processes
 * the programs run in, 65 in all, and on Node 20 each file has one deadline
 * for all its tests.
 */
export function against(integration: "gitlab-repository" | "gitlab-repository-again" | "gitlab-runner") {
  let gitlab: ReturnType<typeof gitlabStandIn>;
  let kubernetes: ReturnType<typeof kubernetesStandIn>;
  /** What the Project's status keeps of each integration's last report, as sync hands it back. */
  let status: Map<string, Record<string, string>>;
  let jobs = 0;
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
    status = new Map();
  });
  after(() => {
    for (const server of servers) server.close();
    rmSync(directory, { recursive: true, force: true });
  });

  const AFTER: Record<string, string[]> = { "gitlab-repository": [], "gitlab-runner": ["gitlab-repository"] };
  /**
   * One attempt of a program, as its Job's container runs it: a new Job each
   * time unless JOB_NAME says which attempt of which Job this is again. What
   * it reported goes into the status, as sync keeps it.
   */
  function run(
    program: string,
    action: "run" | "teardown",
    env: Record<string, string> = {},
    /** What it reported before, where a test says so rather than the status. */
    reportedBefore?: Record<string, string>,
  ): Promise<{ code: number; stderr: string; report: Record<string, string> | null }> {
    const job = env["JOB_NAME"] ?? `shop-${program}-${++jobs}`;
    const environment = {
      PATH: process.env["PATH"] ?? "",
      GITLAB_URL: gitlabUrl,
      GITLAB_TOKEN: TOKEN,
      GITLAB_GROUP: "teams",
      PROJECT: "shop",
      PROJECT_UID,
      PROJECT_NAMESPACE: SHOP,
      INTEGRATION: program,
      ACTION: action,
      JOB_NAME: job,
      PARAMETERS: "{}",
      // As sync tells it, but where a test says what this one reported before.
      REPORTS: JSON.stringify({ ...Object.fromEntries(status), ...(reportedBefore ? { [program]: reportedBefore } : {}) }),
      AFTER: (AFTER[program] ?? []).join(","),
      KUBERNETES_API: kubernetesUrl,
      SERVICE_ACCOUNT_DIR: directory,
      ...env,
    };
    return new Promise((resolve) => {
      execFile(process.execPath, [join(directory, `${program}.mjs`)], { env: environment, timeout: 20_000 }, (error, _stdout, stderr) => {
        const text = kubernetes.state.jobAnnotations.get(`${INTEGRATIONS_NAMESPACE}/${job}`)?.[OUTPUTS_ANNOTATION];
        const report = text === undefined ? null : JSON.parse(text);
        if (report) status.set(program, report);
        resolve({ code: error ? Number(error.code ?? 1) : 0, stderr, report });
      });
    });
  }
  const MEMBERS = JSON.stringify([
    { kind: "User", name: "alice@example.com", role: "admin" },
    { kind: "User", name: "bob", role: "view" },
    { kind: "User", name: "carol@example.com", role: "edit" },
    { kind: "User", name: "dave@example.com", role: "edit" },
    { kind: "Group", name: "ops", role: "edit" },
  ]);
  /** GitLab calls that change something. */
  const writes = () => gitlab.state.calls.filter((call) => call.method !== "GET");
  /** The programs hand over into the Project's Namespace; they never read from it. */
  const assertNothingReadFromTheNamespace = () =>
    assert.deepEqual(
      kubernetes.state.calls.filter((call) => call.method === "GET" && call.path.startsWith(`/api/v1/namespaces/${SHOP}/`)),
      [],
    );
  const secretIdOf = () => Buffer.from(kubernetes.state.secrets.get(`${SHOP}/gitlab-runner`).data.id, "base64").toString();

  if (integration === "gitlab-repository") describe("gitlab-repository", () => {
    test("the repository is created in the group with the visibility asked, saying whose it is, members at the access their role gives, and its URL and id reported", async () => {
      const result = await run("gitlab-repository", "run", { MEMBERS, PARAMETERS: '{"visibility":"internal"}' });
      assert.equal(result.code, 0, result.stderr);
      const [repository] = gitlab.state.projects;
      assert.deepEqual([repository?.path_with_namespace, repository?.visibility], ["teams/shop", "internal"]);
      assert.equal(repository?.description, `Made for Project shop (uid ${PROJECT_UID}) by integration gitlab-repository.`);
      assert.deepEqual(Object.fromEntries(repository!.members), { 1: 50, 2: 40, 3: 20, 4: 30 });
      assert.deepEqual(result.report, { url: "https://gitlab.example/teams/shop", id: "100", notInGitLab: "carol" });
    });

    test("members GitLab has no user for are reported by name as far as the report has room, and the rest counted: the run succeeds", async () => {
      const strangers = Array.from({ length: 60 }, (_, index) => ({ kind: "User", name: `stranger-${String(index).padStart(2, "0")}@example.com`, role: "view" }));
      const result = await run("gitlab-repository", "run", { MEMBERS: JSON.stringify([...JSON.parse(MEMBERS), ...strangers]) });
      assert.equal(result.code, 0, result.stderr);
      const listed = result.report?.["notInGitLab"] ?? "";
      assert.match(listed, /^carol, stranger-00, stranger-01, .*, and \d+ more$/);
      assert.ok(listed.length <= 512 && [...JSON.stringify(result.report)].length <= 1024, listed);
    });

    test("run again, it creates nothing: a changed role is updated, a removed member loses access, the token's own user stays", async () => {
      assert.equal((await run("gitlab-repository", "run", { MEMBERS })).code, 0);
      const changed = JSON.stringify([{ kind: "User", name: "bob", role: "admin" }]);
      const result = await run("gitlab-repository", "run", { MEMBERS: changed });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(gitlab.state.projects.length, 1);
      assert.deepEqual(Object.fromEntries(gitlab.state.projects[0]!.members), { 1: 50, 3: 40 });
      assert.equal(gitlab.state.calls.filter((call) => call.method === "POST" && call.path === "projects").length, 1);
      assert.deepEqual(result.report, { url: "https://gitlab.example/teams/shop", id: "100" });
    });

    test("a repository made by hand at the path is refused with exit 3, saying so in its report, and left exactly as it was; its teardown deletes nothing", async () => {
      const theirs = gitlab.madeElsewhere("teams/shop");
      const result = await run("gitlab-repository", "run", { MEMBERS });
      assert.equal(result.code, 3, result.stderr);
      assert.deepEqual(result.report, {
        refused:
          "teams/shop in GitLab (id 100) was not made for Project shop by this integration, so it is left exactly as it is. " +
          "Move or delete it in GitLab, or recreate the Project under another name; then raise spec.integrations.gitlab-repository.retry.",
      });
      assert.deepEqual(writes(), [], "no member added, changed or removed, nothing created");
      assert.deepEqual(Object.fromEntries(theirs.members), { 1: 50, 5: 40 });
      const teardown = await run("gitlab-repository", "teardown");
      assert.equal(teardown.code, 0, teardown.stderr);
      assert.match(teardown.stderr, /no repository is recorded as made for this Project, so none is deleted/);
      assert.deepEqual(writes(), []);
      assert.deepEqual(gitlab.state.projects, [theirs]);
    });

    test("a repository recorded by a release whose reports held only its URL is this Project's: a run takes it and records its id, a teardown deletes it", async () => {
      assert.equal((await run("gitlab-repository", "run", { MEMBERS })).code, 0);
      const [made] = gitlab.state.projects;
      // As the status of a Project of that release says it.
      status = new Map([["gitlab-repository", { url: made!.web_url }]]);
      const again = await run("gitlab-repository", "run", { MEMBERS });
      assert.equal(again.code, 0, again.stderr);
      assert.deepEqual([again.report?.["url"], again.report?.["id"]], [made!.web_url, String(made!.id)]);
      status = new Map([["gitlab-repository", { url: made!.web_url }]]);
      assert.equal((await run("gitlab-repository", "teardown")).code, 0);
      assert.deepEqual(gitlab.state.projects, []);
    });

    test("a URL recorded for another repository than the one at the path takes nothing: refused, and no teardown deletes it", async () => {
      const theirs = gitlab.madeElsewhere("teams/shop");
      status = new Map([["gitlab-repository", { url: "https://gitlab.example/teams/elsewhere" }]]);
      assert.equal((await run("gitlab-repository", "run", { MEMBERS })).code, 3);
      status = new Map([["gitlab-repository", { url: "https://gitlab.example/teams/elsewhere" }]]);
      assert.equal((await run("gitlab-repository", "teardown")).code, 0);
      assert.deepEqual(gitlab.state.projects, [theirs]);
    });

    test("a repository left by an earlier Project of the same name, which this one has no record of, is refused and left as it was; the teardown deletes nothing", async () => {
      assert.equal((await run("gitlab-repository", "run", { MEMBERS })).code, 0);
      const earlier = gitlab.state.projects[0]!;
      const members = Object.fromEntries(earlier.members);
      // That Project was deleted with skipTeardown; a new Project of the same name starts with a status of its own.
      status = new Map();
      gitlab.state.calls = [];
      const result = await run("gitlab-repository", "run", { MEMBERS: "[]" });
      assert.equal(result.code, 3, result.stderr);
      assert.match(result.report?.["refused"] ?? "", /^teams\/shop in GitLab \(id 100\) was not made for Project shop by this integration, so it is left exactly as it is\./);
      assert.deepEqual(writes(), []);
      assert.deepEqual(Object.fromEntries(earlier.members), members);
      assert.equal((await run("gitlab-repository", "teardown")).code, 0);
      assert.deepEqual(writes(), []);
      assert.deepEqual(gitlab.state.projects, [earlier]);
    });

    test("a repository at the path that is not the one this Project's record names is refused and left as it was, the record kept; the teardown deletes neither", async () => {
      assert.equal((await run("gitlab-repository", "run", { MEMBERS })).code, 0);
      // This Project's repository was moved away, and another made where it was.
      const mine = gitlab.state.projects[0]!;
      mine.path_with_namespace = "teams/archive/shop";
      const theirs = gitlab.madeElsewhere("teams/shop");
      gitlab.state.calls = [];
      const result = await run("gitlab-repository", "run", { MEMBERS });
      assert.equal(result.code, 3, result.stderr);
      assert.deepEqual(result.report, {
        id: "100",
        refused:
          "teams/shop in GitLab (id 101) is not the repository this integration made for Project shop (id 100), so it is left exactly as it is. " +
          "Move or delete it in GitLab, or recreate the Project under another name; then raise spec.integrations.gitlab-repository.retry.",
      });
      assert.deepEqual(writes(), []);
      assert.deepEqual(Object.fromEntries(theirs.members), { 1: 50, 5: 40 });
      const teardown = await run("gitlab-repository", "teardown");
      assert.equal(teardown.code, 0, teardown.stderr);
      assert.deepEqual(writes(), []);
      assert.deepEqual(gitlab.state.projects, [mine, theirs]);
    });

    test("a refusal that cannot be reported is a failed attempt, to be tried again (exit 1), not a refusal nobody sees", async () => {
      gitlab.madeElsewhere("teams/shop");
      kubernetes.state.failing = { method: "PATCH", path: /\/jobs\//, status: 503 };
      const result = await run("gitlab-repository", "run");
      assert.equal(result.code, 1);
      assert.match(result.stderr, new RegExp(String.raw`was not made for Project shop[^\n]*\n.*and reporting that failed: PATCH \/apis\/batch\/v1\/namespaces\/${escaped(INTEGRATIONS_NAMESPACE)}\/jobs\/[^ ]+ answered 503`));
      assert.deepEqual(writes(), []);
    });

    test("a refusal is reported within the 512 characters a report's value may hold, however long the path", async () => {
      const group = `teams/${"deep/".repeat(80)}end`;
      gitlab.madeElsewhere(`${group}/shop`);
      const result = await run("gitlab-repository", "run", { GITLAB_GROUP: group });
      assert.equal(result.code, 3, result.stderr);
      assert.equal(result.report?.["refused"]?.length, 512);
      assert.ok(result.report?.["refused"]?.endsWith("…"));
    });

    test("a refusal whose words JSON writes longer is cut further, to fit the 1024 characters of a report", async () => {
      const group = `teams/${'"'.repeat(1000)}`;
      gitlab.madeElsewhere(`${group}/shop`);
      const result = await run("gitlab-repository", "run", { GITLAB_GROUP: group });
      assert.equal(result.code, 3, result.stderr);
      assert.ok(result.report?.["refused"]?.endsWith("…"));
      const length = [...JSON.stringify(result.report)].length;
      assert.ok(length <= 1024 && length > 1000, `${length} characters`);
    });

  });

  if (integration === "gitlab-repository-again") describe("gitlab-repository: run again, GitLab's errors, and the teardown", () => {
    test("a repository once made and then deleted in GitLab is made again, and the new one recorded", async () => {
      assert.equal((await run("gitlab-repository", "run", { MEMBERS })).code, 0);
      gitlab.state.projects = [];
      const result = await run("gitlab-repository", "run", { MEMBERS });
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(gitlab.state.projects.map((each) => each.id), [101]);
      assert.equal(result.report?.["id"], "101");
    });

    test("a report that fails right after the repository is created deletes the repository again and fails the run; the next attempt makes it anew", async () => {
      kubernetes.state.failing = { method: "PATCH", path: /\/jobs\//, status: 503 };
      const result = await run("gitlab-repository", "run", { MEMBERS, JOB_NAME: "shop-gitlab-repository-retried" });
      assert.equal(result.code, 1);
      assert.match(result.stderr, new RegExp(String.raw`PATCH \/apis\/batch\/v1\/namespaces\/${escaped(INTEGRATIONS_NAMESPACE)}\/jobs\/shop-gitlab-repository-retried answered 503`));
      assert.equal(gitlab.state.projects.length, 0, "nothing exists that no record names");
      assert.ok(gitlab.state.calls.some((call) => call.method === "DELETE" && call.path === "projects/100"));
      const again = await run("gitlab-repository", "run", { MEMBERS, JOB_NAME: "shop-gitlab-repository-retried" });
      assert.equal(again.code, 0, again.stderr);
      assert.deepEqual(gitlab.state.projects.map((each) => each.id), [101]);
    });

    test("a retry of the same Job takes the repository its earlier attempt made and reported as this Project's, though the REPORTS its Pod started with predate it", async () => {
      gitlab.state.failing = { method: "POST", path: /^projects\/\d+\/members$/, status: 500 };
      const first = await run("gitlab-repository", "run", { MEMBERS, JOB_NAME: "shop-gitlab-repository-retried" });
      assert.equal(first.code, 1);
      assert.deepEqual(first.report, { url: "https://gitlab.example/teams/shop", id: "100" });
      // sync made the Job before the first attempt: every attempt of it is told the same.
      const again = await run("gitlab-repository", "run", { MEMBERS, JOB_NAME: "shop-gitlab-repository-retried" }, {});
      assert.equal(again.code, 0, again.stderr);
      assert.deepEqual(gitlab.state.projects.map((each) => each.id), [100]);
      assert.deepEqual(Object.fromEntries(gitlab.state.projects[0]!.members), { 1: 50, 2: 40, 3: 20, 4: 30 });
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
      assert.equal(down.report, null, "nothing reported");
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

    test("the teardown deletes the repository recorded, and succeeds when it is gone already", async () => {
      await run("gitlab-repository", "run");
      assert.equal((await run("gitlab-repository", "teardown")).code, 0);
      assert.deepEqual(gitlab.state.projects, []);
      assert.equal((await run("gitlab-repository", "teardown")).code, 0);
    });

    test("the teardown of a repository that moved to another path leaves it, saying so", async () => {
      await run("gitlab-repository", "run");
      const mine = gitlab.state.projects[0]!;
      mine.path_with_namespace = "teams/archive/shop";
      const result = await run("gitlab-repository", "teardown");
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stderr, /repository id 100, made as teams\/shop, is now teams\/archive\/shop, so it is left as it is/);
      assert.deepEqual(gitlab.state.projects, [mine]);
      assert.deepEqual(writes().filter((call) => call.method === "DELETE"), []);
    });

    test("the teardown of a repository whose path differs only in case deletes it: GitLab's paths are not case-sensitive", async () => {
      await run("gitlab-repository", "run");
      gitlab.state.projects[0]!.path_with_namespace = "Teams/Shop";
      assert.equal((await run("gitlab-repository", "teardown")).code, 0);
      assert.deepEqual(gitlab.state.projects, []);
    });
  });

  if (integration === "gitlab-runner") describe("gitlab-runner", () => {
    test("the runner fails until the repository's integration has reported its id, saying so, and registers nothing", async () => {
      const result = await run("gitlab-runner", "run");
      assert.equal(result.code, 1);
      assert.match(result.stderr, /this integration runs after the integration that makes the repository, which has reported none yet/);
      assert.equal(gitlab.state.runners.size, 0);
      assert.deepEqual(gitlab.state.calls, []);
    });

    test("the runner takes a repository's id only from an integration it runs after, not from any other's report", async () => {
      status = new Map([["tracker", { id: "101" }]]);
      const result = await run("gitlab-runner", "run");
      assert.equal(result.code, 1);
      assert.match(result.stderr, /which has reported none yet/);
      assert.equal(gitlab.state.runners.size, 0);
    });

    test("the runner is registered for the repository reported, its token handed to the Project's Namespace and reported nowhere else", async () => {
      await run("gitlab-repository", "run");
      const result = await run("gitlab-runner", "run");
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual([...gitlab.state.runners.values()], [{ runner_type: "project_type", projects: [100], description: SHOP }]);
      const secret = kubernetes.state.secrets.get(`${SHOP}/gitlab-runner`);
      assert.equal(Buffer.from(secret.data.token, "base64").toString(), "glrt-secret-500");
      assert.deepEqual(result.report, { runner: "500" });
      const everywhereElse = JSON.stringify([...kubernetes.state.jobAnnotations.values(), result.stderr]);
      assert.ok(!everywhereElse.includes("glrt-secret"), everywhereElse);
      assertNothingReadFromTheNamespace();
    });

    test("run again, the runner is kept and its Secret left alone; once deleted in GitLab, a new one is registered and the Secret replaced", async () => {
      await run("gitlab-repository", "run");
      await run("gitlab-runner", "run");
      const writesBefore = kubernetes.state.calls.filter((call) => call.path.includes("/secrets")).length;
      const kept = await run("gitlab-runner", "run");
      assert.equal(kept.code, 0, kept.stderr);
      assert.deepEqual(kept.report, { runner: "500" });
      assert.equal(gitlab.state.runners.size, 1);
      assert.equal(kubernetes.state.calls.filter((call) => call.path.includes("/secrets")).length, writesBefore, "the Secret is not touched");
      gitlab.state.runners.clear();
      const again = await run("gitlab-runner", "run");
      assert.equal(again.code, 0, again.stderr);
      assert.deepEqual([...gitlab.state.runners.keys()], [501]);
      assert.deepEqual(again.report, { runner: "501" });
      assert.equal(secretIdOf(), "501");
      const put = kubernetes.state.calls.find((call) => call.method === "PUT");
      assert.ok(put, "the Secret is replaced, not created twice");
      assert.equal(put.body.metadata.resourceVersion, undefined, "without a resourceVersion, since it was never read");
      assertNothingReadFromTheNamespace();
    });

    test("a Secret planted in the Project's Namespace naming another team's runner is never read: the run registers its own, and the teardown deletes only the one recorded", async () => {
      const other = gitlab.madeElsewhere("teams/other");
      const theirs = gitlab.runnerElsewhere(other);
      kubernetes.plant("gitlab-runner", { id: String(theirs), token: "planted", url: gitlabUrl });
      await run("gitlab-repository", "run");
      const result = await run("gitlab-runner", "run");
      assert.equal(result.code, 0, result.stderr);
      const mine = theirs + 1;
      assert.deepEqual(result.report, { runner: String(mine) });
      assert.deepEqual(gitlab.state.runners.get(mine)?.projects, [101]);
      assert.equal(secretIdOf(), String(mine), "the planted Secret is replaced by this Project's");
      // Planted again, after the run: still nobody's business.
      kubernetes.plant("gitlab-runner", { id: String(theirs), token: "planted", url: gitlabUrl });
      const kept = await run("gitlab-runner", "run");
      assert.deepEqual(kept.report, { runner: String(mine) });
      assert.equal(secretIdOf(), String(theirs), "a kept runner's Secret is left alone");
      const teardown = await run("gitlab-runner", "teardown");
      assert.equal(teardown.code, 0, teardown.stderr);
      assert.deepEqual([...gitlab.state.runners.keys()], [theirs]);
      assert.ok(!gitlab.state.calls.some((call) => call.path === `runners/${theirs}` && call.method === "DELETE"));
      assertNothingReadFromTheNamespace();
    });

    test("another repository's runner in its entry of REPORTS is neither kept nor deleted: a new one is registered for this repository", async () => {
      const other = gitlab.madeElsewhere("teams/other");
      const theirs = gitlab.runnerElsewhere(other);
      await run("gitlab-repository", "run");
      const result = await run("gitlab-runner", "run", {}, { runner: String(theirs) });
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stderr, new RegExp(`runner ${theirs}, recorded, is not repository 101's in GitLab \\(any more\\): it is left as it is, and another registered`));
      assert.deepEqual(result.report, { runner: String(theirs + 1) });
      assert.deepEqual(gitlab.state.runners.get(theirs), { runner_type: "project_type", projects: [other.id], description: namespaceOf("other") });
      assert.deepEqual(gitlab.state.runners.get(theirs + 1)?.projects, [101]);
      const teardown = await run("gitlab-runner", "teardown", {}, { runner: String(theirs) });
      assert.equal(teardown.code, 0, teardown.stderr);
      assert.match(teardown.stderr, new RegExp(`runner ${theirs}, recorded, is not repository 101's in GitLab \\(any more\\), so it is left as it is`));
      assert.ok(gitlab.state.runners.has(theirs));
      assert.ok(!gitlab.state.calls.some((call) => call.method === "DELETE"));
    });

    test("a recorded runner GitLab will not show this token (403) is not this repository's: it is left, and another registered", async () => {
      const other = gitlab.madeElsewhere("elsewhere/other");
      const hidden = gitlab.runnerElsewhere(other, { hidden: true });
      await run("gitlab-repository", "run");
      const result = await run("gitlab-runner", "run", {}, { runner: String(hidden) });
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(result.report, { runner: String(hidden + 1) });
      assert.ok(gitlab.state.runners.has(hidden));
    });

    test("a report that fails right after the runner is registered deletes the runner again, fails the run, and hands nothing over", async () => {
      await run("gitlab-repository", "run");
      kubernetes.state.failing = { method: "PATCH", path: /\/jobs\//, status: 503 };
      const result = await run("gitlab-runner", "run");
      assert.equal(result.code, 1);
      assert.match(result.stderr, new RegExp(String.raw`PATCH \/apis\/batch\/v1\/namespaces\/${escaped(INTEGRATIONS_NAMESPACE)}\/jobs\/[^ ]+ answered 503`));
      assert.equal(gitlab.state.runners.size, 0);
      assert.equal(kubernetes.state.secrets.size, 0);
    });

    test("a runner whose token cannot be handed over is deleted again, and the run fails saying why", async () => {
      await run("gitlab-repository", "run");
      kubernetes.state.refusingSecrets = true;
      const result = await run("gitlab-runner", "run");
      assert.equal(result.code, 1);
      assert.match(result.stderr, new RegExp(String.raw`POST \/api\/v1\/namespaces\/${escaped(SHOP)}\/secrets answered 403`));
      assert.equal(gitlab.state.runners.size, 0);
      assert.ok(!result.stderr.includes("glrt-secret"), "the token is in no log");
    });

    test("the runner's teardown deletes the runner it recorded, and nothing when none is recorded", async () => {
      await run("gitlab-repository", "run");
      await run("gitlab-runner", "run");
      assert.equal((await run("gitlab-runner", "teardown")).code, 0);
      assert.equal(gitlab.state.runners.size, 0);
      const none = await run("gitlab-runner", "teardown", {}, {});
      assert.equal(none.code, 0, none.stderr);
      assert.match(none.stderr, /no runner is recorded as registered for this Project, so none is deleted/);
      assertNothingReadFromTheNamespace();
    });
  });
}
