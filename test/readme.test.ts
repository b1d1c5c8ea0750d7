// The README's and docs/'s transcripts are what the webhook really answers,
// so that a reader who runs them sees what they read, and their links lead
// somewhere.
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { describe, test } from "node:test";
import { CUSTOMIZE_PATH, DEFAULT_BODY_LIMIT_BYTES, SETTINGS, SYNC_PATH, createApp, readConfig } from "../main.ts";
import { API_VERSION, GROUP, NAMESPACE_ANNOTATIONS, ObservedChildren, PARENT, REASONS, sync } from "../sync.ts";
import { parse, parseAllDocuments } from "yaml";
import { fixture } from "./helpers.ts";
import { readManifest } from "../scripts/manifest.ts";
import { currentNames, namesAfter, renamed, type Names } from "../scripts/rename.ts";
import { parseWalkthrough } from "../scripts/walkthrough.ts";
import { CHECK, NEXT } from "../scripts/take-away.ts";
import { STEADY_FIXTURE, StatusChanged, TRANSCRIPT, pagePaths, renderSteadyFixture, renderTranscripts } from "../scripts/transcripts.ts";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const DOCS = readdirSync(new URL("../docs/", import.meta.url)).filter((file) => file.endsWith(".md")).sort();
const pages: Record<string, string> = {
  "README.md": readme,
  ...Object.fromEntries(DOCS.map((file) => [`docs/${file}`, readFileSync(new URL(`../docs/${file}`, import.meta.url), "utf8")])),
};
/** Everything a reader may read, for facts that may live on any page. */
const documentation = Object.values(pages).join("\n");
const app = createApp(readConfig({}));
const manifest = readManifest();

describe("README", () => {
  test("the steady-sync transcript shows the webhook's exact answer and ETag", async (t) => {
    t.mock.method(console, "log", () => {});
    const response = await app.request(SYNC_PATH, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(fixture("steady-sync")),
    });
    const etag = response.headers.get("ETag") ?? "";
    const body = await response.text();
    assert.ok(readme.includes(`etag: ${etag}\n`), `README shows the ETag ${etag}`);
    assert.ok(readme.includes(`-H 'If-None-Match: ${etag}'`), "README sends that ETag back");
    assert.ok(readme.includes(`\n${body}\n`), `README shows the answer:\n${body}`);
  });

  // Each `$ curl -s localhost:8080/<route> ... -d '<body>'` and the lines it prints, up to the next command.
  const transcripts = [...documentation.matchAll(/^\$ curl -s localhost:8080(\/\w+) (.*?)-d '(.*)'( \| jq \.)?\n([\s\S]*?)(?=^\$ |^```)/gm)];
  test("the README shows transcripts of customize, a first sync, a conflict and bad input", () => {
    const all = [...readme.matchAll(TRANSCRIPT)];
    assert.deepEqual([...new Set(all.map(([, , , , route]) => route))].sort(), [CUSTOMIZE_PATH, SYNC_PATH].sort());
    assert.ok(all.length >= 7, `${all.length} transcripts found`);
    assert.ok(readme.includes("-d @test/fixtures/first-sync.json | jq ."), "a first sync");
    assert.ok(all.some(([command]) => command.startsWith("$ jq ") && command.includes('.related["Namespace.v1"]')), "a conflict");
  });
  for (const [, route = "", flags = "", body = "", pretty, printed = ""] of transcripts) {
    test(`the transcript for ${route} -d '${body.length > 40 ? `${body.slice(0, 40)}...` : body}' is what the webhook answers`, async (t) => {
      t.mock.method(console, "log", () => {});
      const headers: Record<string, string> = flags.includes("Content-Type: application/json") ? { "Content-Type": "application/json" } : {};
      const response = await app.request(route, { method: "POST", headers, body });
      const answer = await response.text();
      if (!pretty) return assert.equal(answer, printed.trimEnd());
      // A condition stamped now shows another time in the README.
      const withoutTimes = (text: string) => JSON.stringify(JSON.parse(text), (key, value) => (key === "lastTransitionTime" ? "(time)" : value));
      assert.equal(withoutTimes(answer), withoutTimes(printed));
    });
  }

  test("npm run transcripts would change no page: every transcript is the webhook's answer today", async () => {
    assert.deepEqual(pagePaths(), Object.keys(pages));
    for (const [page, text] of Object.entries(pages)) assert.equal(await renderTranscripts(text), text, `${page}: run npm run transcripts`);
  });

  test("npm run transcripts refuses an answer of another kind than its page shows, naming the request to retype", async () => {
    const request = `$ curl -si localhost:8080/customize -H 'Content-Type: application/json' -d '{"parent": {"metadata": {}}}'`;
    const shown200 = ["```console", request, "HTTP/1.1 200 OK", "content-type: application/json", "", '{"relatedResources":[]}', "```", ""].join("\n");
    await assert.rejects(renderTranscripts(shown200), (error: Error) => error instanceof StatusChanged && error.message.includes(`${request.slice(2, 60)}`) && error.message.endsWith("shows 200, would show 422"));
    const quiet = ["```console", request.replace("-si", "-s"), '{"relatedResources":[]}', "```", ""].join("\n");
    await assert.rejects(renderTranscripts(quiet), (error: Error) => error instanceof StatusChanged && error.message.endsWith("shows an answer, would show an error"));
    const asShown = ["```console", request.replace("-si", "-s"), '{"error":"not a customize hook request"}', "```", ""].join("\n");
    assert.match(await renderTranscripts(asShown), /"issues"/, "an error shown as an error is rewritten");
  });

  test("npm run transcripts would not change the steady fixture: its status is sync's own answer to it", () => {
    const fixture = readFileSync(STEADY_FIXTURE, "utf8");
    assert.equal(renderSteadyFixture(fixture), fixture, "run npm run transcripts");
  });

  test("the quickstart is npm ci && npm test, then npm start, so that pasting both runs the tests first", () => {
    assert.match(readme, /```sh\nnpm ci && npm test {6}# install, type check and every test\nnpm start {15}# the webhook, on http:\/\/localhost:8080\n```/);
    const ci = readFileSync(new URL("../.ci/run", import.meta.url), "utf8");
    assert.match(ci, /^step \d+ "[^"]+" npm ci$/m);
    assert.match(ci, /^step \d+ "[^"]+" npm test$/m);
    assert.equal(readConfig({}).port, 8080);
  });

  test("the Deno command lets the webhook read exactly the settings it has", () => {
    assert.ok(documentation.includes(`--allow-env=${SETTINGS.join(",")} main.ts`), SETTINGS.join(","));
  });

  test("the opening diagram shows every child group a sync request carries", () => {
    const diagram = /```\nkubectl apply [\s\S]*?```/.exec(readme)?.[0] ?? "";
    for (const group of Object.keys(ObservedChildren.entries)) assert.ok(diagram.includes(`"${group}"`), group);
  });

  test("the opening diagram's right edges line up, and still do once renamed to names shorter or longer", () => {
    const diagramOf = (text: string) => /```\nkubectl apply [\s\S]*?```/.exec(text)?.[0] ?? "";
    // Each box's right edge, and where the arrows reach the webhook, in one column apiece.
    const edges = (diagram: string) => {
      const lines = diagram.split("\n");
      return {
        borders: new Set(lines.filter((line) => /[│┘]$/.test(line) && !/^\s*│$/.test(line)).map((line) => [...line].length)),
        arrows: new Set(lines.filter((line) => line.endsWith("▶ this webhook")).map((line) => [...line].length)),
      };
    };
    const current = currentNames();
    const renames = [
      { group: "ox.io", kind: "Ox", plural: "oxen", short: "ox", prefix: "o-" },
      { group: "long-group-name.example.org", kind: "ExtraordinarilyLongKind", plural: "extraordinarilylongkinds", short: "xlk", prefix: `${"p".repeat(31)}-` },
    ];
    for (const [label, diagram] of [["as it is", diagramOf(readme)], ...renames.map((to) => [`renamed to ${to.kind}, prefix ${to.prefix}`, diagramOf(renamed(readme, ...Object.values(namesAfter(current, to)) as [Names, Names]))])]) {
      const { borders, arrows } = edges(diagram!);
      assert.equal(borders.size, 1, `${label}: the right borders end in columns ${[...borders].join(", ")}`);
      assert.equal(arrows.size, 1, `${label}: the arrows reach the webhook in columns ${[...arrows].join(", ")}`);
    }
  });

  test("the settings table gives main.ts's default body limit, which npm run manifest writes into both", () => {
    const row = /^\| `BODY_LIMIT_BYTES` \| `(\d+)` \|/m.exec(pages["docs/operating.md"] ?? "");
    assert.equal(Number(row?.[1]), DEFAULT_BODY_LIMIT_BYTES);
  });

  test("the memory the pod asks for covers the idle and peak memory the Performance section measured", () => {
    const performance = pages["docs/operating.md"] ?? "";
    const idle = Number(/^idle RSS of \.cache\/deployed\/webhook\.mjs: (\d+) MB$/m.exec(performance)?.[1]);
    const webhookColumn = [...performance.matchAll(/^\| [a-z ]+ \| \d+ req\/s, .*?, (\d+) MB +\|/gm)].map((row) => Number(row[1]));
    const peak = Math.max(...webhookColumn);
    assert.ok(idle > 0 && webhookColumn.length === 4, "the bench transcript is there, a row for each of its fixtures");
    assert.ok(performance.includes(`covers the idle ${idle} MB`) && performance.includes(`the ${peak} MB peak`), "the prose quotes the transcript");
    const deployment = manifest.find("Deployment");
    const { requests, limits } = deployment.spec.template.spec.containers[0].resources;
    const megabytes = (quantity: string) => (Number(/^(\d+)Mi$/.exec(quantity)?.[1]) * 1024 * 1024) / 1e6;
    assert.ok(idle <= megabytes(requests.memory), `request ${requests.memory} covers ${idle} MB`);
    assert.ok(peak <= megabytes(limits.memory), `limit ${limits.memory} covers ${peak} MB`);
    assert.ok(performance.includes(`memory request (${requests.memory.replace("Mi", " Mi")})`) && performance.includes(`limit\n(${limits.memory.replace("Mi", " Mi")})`));
  });

  // GitHub's anchors: lower case, punctuation but '-' dropped, spaces to '-'.
  const anchorOf = (heading: string) => heading.toLowerCase().replace(/[^\p{L}\p{N} -]/gu, "").replaceAll(" ", "-");
  const anchorsOf = (text: string) => new Set([...text.matchAll(/^#+ (.+)$/gm)].map(([, heading]) => anchorOf(heading ?? "")));
  for (const [page, text] of Object.entries(pages)) {
    test(`every link in ${page} to a file of this repository, or a heading in one, leads there`, () => {
      const links = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map(([, target]) => target ?? "").filter((target) => !/^[a-z]+:/.test(target));
      for (const link of links) {
        const [path = "", anchor] = link.split("#");
        const target = path === "" ? page : new URL(path, new URL(page, "file:///repo/")).pathname.slice("/repo/".length);
        const targetText = target === page ? text : pages[target] ?? (existsSync(new URL(`../${target}`, import.meta.url)) ? "" : undefined);
        assert.notEqual(targetText, undefined, `${link}: no ${target}`);
        if (anchor) assert.ok(anchorsOf(targetText ?? "").has(anchor), `${link}: no heading #${anchor} in ${target}`);
      }
    });
  }

  test("each page of docs/ says first what it is for, and the README links to it", () => {
    for (const file of DOCS) {
      assert.match(pages[`docs/${file}`] ?? "", /^# .+\n\nWhat this is for: /, file);
      assert.ok(readme.includes(`](docs/${file})`), `README links docs/${file}`);
    }
  });

  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

  test("every reason a table of the docs explains is one sync gives, so that a copy never documents a reason it cannot give", () => {
    const documented = [...documentation.matchAll(/^\| `(\w+)` \| (?:True|False) \|/gm)].map(([, reason]) => reason!);
    assert.ok(documented.includes("NamespaceActive"), "the reasons' table is where this looks");
    assert.deepEqual(documented.filter((reason) => !REASONS.includes(reason)), []);
  });

  test("every reason sync gives, and every field of its status, is explained in a table of the docs", () => {
    const explained = (name: string) => new RegExp(`^\\| \`${escape(name)}\` \\|`, "m").test(documentation);
    for (const reason of REASONS) assert.ok(explained(reason), `reason ${reason}`);
    const { parent, children, related } = fixture("steady-sync");
    for (const field of Object.keys(sync(parent, children, related).status)) {
      assert.ok(explained(field === "conditions" ? "conditions[Ready]" : field), `status field ${field}`);
    }
  });

  test("every page that says which Kubernetes it needs names the one k8s.yaml's first lines name", () => {
    const needs = (text: string) => [...text.matchAll(/Kubernetes\s+(1\.\d+)\s+or\s+later/g)].map(([, version]) => version);
    const [installs, ...more] = needs(manifest.text.slice(0, 300));
    assert.ok(installs && more.length === 0, "k8s.yaml names one version");
    for (const [page, text] of Object.entries(pages)) assert.deepEqual([...new Set(needs(text))].filter((version) => version !== installs), [], page);
  });

  // A page that said "before 1.30" reads as a promise that 1.30 will do,
  // and the advice for older clusters once named one feature's policy alone.
  test("no page names a Kubernetes older than k8s.yaml's, and cluster.md's advice for older clusters names each document that needs it, with its take-away", () => {
    const minor = (version: string) => Number(version.split(".")[1]);
    const installs = /Kubernetes\s+(1\.\d+)\s+or\s+later/.exec(manifest.text.slice(0, 300))?.[1] ?? "";
    for (const [page, text] of Object.entries(pages)) {
      const older = [...text.matchAll(/Kubernetes\s+(1\.\d+)/g)].map(([, version]) => version!).filter((version) => minor(version) < minor(installs));
      assert.deepEqual(older, [], page);
    }
    const cluster = pages["docs/cluster.md"]!;
    const advice = cluster.slice(cluster.indexOf("**An older cluster.**"), cluster.indexOf("\n## 1."));
    const needing = [...manifest.text.matchAll(/^#\s+- MutatingAdmissionPolicy (\S+)(?:\s+# feature: (\S+))?$/gm)];
    assert.ok(needing.length > 0 || !manifest.objects.some((object) => object.kind === "MutatingAdmissionPolicy"), "k8s.yaml's contents name its MutatingAdmissionPolicies");
    for (const [, name, feature] of needing) {
      assert.match(advice, new RegExp(`MutatingAdmissionPolicy and Binding \`${name!.replace(/\./g, "\\.")}\``), name);
      assert.ok(feature && advice.includes(`npm run take-away -- ${feature}`), `${name}: its feature's take-away`);
    }
  });

  test("LICENSE is the license package.json names", () => {
    const { license } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    assert.equal(readFileSync(new URL("../LICENSE", import.meta.url), "utf8").split("\n")[0], `${license} License`);
  });
});

// docs/cluster.md is run on a cluster and its outputs written in (npm run
// walkthrough), so its commands are a person's to write: these hold its
// examples of the Namespace's annotations to sync.ts's NAMESPACE_ANNOTATIONS,
// and name what to change where a copy has other fields, or none.
describe("docs/cluster.md: the Namespace's annotations are sync.ts's", () => {
  const page = pages["docs/cluster.md"] ?? "";
  const section = (number: number) => page.slice(page.indexOf(`\n## ${number}. `), page.indexOf(`\n## ${number + 1}. `));
  const fields = Object.keys(NAMESPACE_ANNOTATIONS);

  test(`the ${PARENT.kind} created in step 2 gives each field NAMESPACE_ANNOTATIONS names, and no other`, () => {
    const created = /kubectl apply -f - <<EOF\n([\s\S]*?)\nEOF/.exec(section(2))?.[1] ?? "";
    assert.deepEqual(Object.keys(parse(created)?.spec ?? {}), fields, `step 2 of docs/cluster.md:\n${created}`);
  });

  // What a CRD requires that an example does not give: the API server
  // refuses it, and npm run walkthrough would write that refusal in.
  const lackingRequired = (schema: any) =>
    parseWalkthrough(page).flatMap(({ script, line }) =>
      parseAllDocuments(script.slice(script.indexOf("\n") + 1))
        .map((document) => document.toJS())
        .filter((object) => object?.kind === PARENT.kind && object?.apiVersion === API_VERSION)
        .flatMap((object) => {
          const missing = [...(schema.required ?? []).filter((field: string) => !(field in object)), ...(schema.properties.spec.required ?? []).filter((field: string) => !(field in (object.spec ?? {}))).map((field: string) => `spec.${field}`)];
          return missing.map((field) => `docs/cluster.md:${line}: ${PARENT.kind} ${object.metadata?.name} lacks ${field}`);
        }),
    );
  const parentSchema = manifest.find("CustomResourceDefinition", `${PARENT.plural}.${GROUP}`).spec.versions[0].schema.openAPIV3Schema;

  test(`every ${PARENT.kind} an example creates gives each field the CRD requires, and a CRD that requires one more names each example`, () => {
    assert.deepEqual(lackingRequired(parentSchema), []);
    const created = parseWalkthrough(page).filter(({ script }) => new RegExp(`^kind: ${PARENT.kind}$`, "m").test(script)).length;
    const requiring = structuredClone(parentSchema);
    requiring.properties.spec.required = [...(requiring.properties.spec.required ?? []), "severity"];
    assert.equal(lackingRequired(requiring).length, created, lackingRequired(requiring).join("\n"));
  });

  test("step 3 shows those annotations on the Namespace, as the webhook asked for them", () => {
    const shown = /kubectl get namespace \S+ -o yaml\n([\s\S]*?)\n```/.exec(section(3))?.[1] ?? "";
    // kubectl prints a map's keys sorted, whatever order sync.ts names them in.
    const annotations = Object.keys(parse(shown)?.metadata?.annotations ?? {}).filter((key) => !key.includes("/"));
    assert.deepEqual(annotations.sort(), [...fields].sort(), "step 3 shows what a run printed: npm run walkthrough prints it anew (README, Make it your own, steps 0 and 3)");
  });

  test("step 4 changes one of them, and none where there is none", () => {
    const step = section(4);
    const [, patched = ""] = /kubectl patch \S+ \S+ --type=merge -p '\{"spec":\{"([^"]+)"/.exec(step) ?? [];
    if (fields.length === 0) return assert.equal(patched, "", `docs/cluster.md step 4 changes spec.${patched}, which NAMESPACE_ANNOTATIONS no longer has`);
    assert.ok(fields.includes(patched), `step 4 patches spec.${patched}, not one of ${fields.join(", ")}`);
    assert.match(step, new RegExp(String.raw`--for=jsonpath='\{\.metadata\.annotations\.${patched}\}'`));
  });
});

describe("README: the commands it names", () => {
  const { scripts } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { scripts: Record<string, string> };

  test("every npm run it names is a script of package.json", () => {
    const named = [...documentation.matchAll(/npm\s+run\s+([a-z][-a-z0-9:]*)/g)].map(([, script]) => script!);
    assert.deepEqual([...new Set(named.filter((script) => !(script in scripts)))], []);
  });

  test("Make it your own names how to try k8s.yaml by hand on the local control plane, with functions scripts/local-plane.sh defines, in a shell or in a script", () => {
    const guide = readme.slice(readme.indexOf("## Make it your own"), readme.indexOf("## Layout")).replace(/\s+/g, " ");
    const tryIt = /`bash -c 'source scripts\/local-plane\.sh && (.+?) && bash -i'`/.exec(guide);
    assert.ok(tryIt, "README's step 4 gives the line that starts a plane, applies k8s.yaml and opens a shell");
    assert.ok(guide.includes(`\`bash -c 'source scripts/local-plane.sh && ${tryIt[1]} && bash try.sh'\``), "and the same line with a script in the shell's place, for a run with nobody at the keyboard");
    const script = readFileSync(new URL("../scripts/local-plane.sh", import.meta.url), "utf8");
    for (const [, called] of tryIt[1]!.matchAll(/(?:^|&& )(\w+)/g)) assert.match(script, new RegExp(`^${called}\\(\\) \\{$`, "m"), `scripts/local-plane.sh defines ${called}`);
    assert.match(tryIt[1]!, /local_plane_up .* && local_plane_apply$/);
  });

  test("Make it your own's check, after each step, is the one take-away and rename print, the walkthrough among it", () => {
    const guide = readme.slice(readme.indexOf("## Make it your own"), readme.indexOf("## Layout"));
    assert.ok(guide.includes(`   \`\`\`sh\n${CHECK.map((line) => `   ${line}\n`).join("")}   \`\`\`\n`), `README's step 0 shows the check:\n${CHECK.join("\n")}`);
    assert.ok(CHECK.some((line) => line.includes("npm run walkthrough")) && CHECK.at(-1) === "npm test", "the walkthrough runs before npm test, which reads what it wrote");
    assert.ok(NEXT.includes(CHECK.join(", then ")));
    for (const script of ["take-away.ts", "rename.ts"]) assert.match(readFileSync(new URL(`../scripts/${script}`, import.meta.url), "utf8"), /console\.log\(NEXT\);/, `${script} prints it`);
    assert.match(readFileSync(new URL("../scripts/new-feature.ts", import.meta.url), "utf8"), /console\.log\(`next: .*\$\{CHECK\.join\(", then "\)\}`\);/, "new-feature ends its next line with it");
  });

  test("Make it your own shows the network namespace's exact form wherever it speaks of another control plane, and no command before step 0 says how to run it", () => {
    const guide = readme.slice(readme.indexOf("## Make it your own"), readme.indexOf("## Layout"));
    const steps = guide.split(/\n(?=\d+\. \*\*)/).slice(1);
    assert.match(steps[0] ?? "", /^0\. \*\*Once, before the steps: a local control plane/);
    const flat = guide.replace(/\s+/g, " ");
    const mentions = [...flat.matchAll(/another plane|second (control )?plane/g)];
    assert.ok(mentions.length > 0, "the guide says what to do beside another plane");
    for (const { index } of mentions) {
      // Within a few lines: where it is said, not pages later.
      assert.match(flat.slice(index, index + 320), /unshare -n bash -c 'ip link set lo up; /, `...${flat.slice(index, index + 80)}...: names another plane without the unshare form after it`);
    }
    // What needs a control plane is met first in step 0, which says how to run it.
    for (const command of ["npm run walkthrough", "test:e2e:local", "npm run runtime-cache"]) {
      assert.equal(steps.findIndex((step) => step.replace(/\s+/g, " ").includes(command)), 0, `${command} first appears in step 0`);
    }
  });

  test("Make it your own names the command that fills .cache/runtimes and .cache/helm for an offline e2e, and it is that one", () => {
    const guide = readme.slice(readme.indexOf("## Make it your own"), readme.indexOf("## Layout"));
    assert.match(guide.replace(/\s+/g, " "), /`npm run runtime-cache` fills `\.cache\/runtimes` \(the Node 24 the Deployment runs on\) and `\.cache\/helm` \(the helm the e2e's chart step runs, built from its Go module\)/);
    assert.equal(scripts["runtime-cache"], "tsx scripts/runtime-cache.ts && tsx scripts/helm.ts");
    assert.match(readFileSync(new URL("local-e2e.sh", import.meta.url), "utf8"), /scripts\/helm\.ts/, "the e2e reads the same helm");
    assert.match(readFileSync(new URL("../scripts/local-plane.sh", import.meta.url), "utf8"), /scripts\/runtime-cache\.ts/, "the e2e reads the same cache");
  });
});
