// The Helm chart (chart/) is k8s.yaml with its install settings made values:
// written by `npm run manifest`, so that it never drifts from k8s.yaml, and
// its values are exactly those the template reads, each checked by the
// chart's schema before helm renders anything. e2e step 74 renders it with
// a real helm and installs, upgrades and uninstalls it.
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { describe, test } from "node:test";
import { Ajv } from "ajv";
import { parse } from "yaml";
import { CHART_DIRECTORY, GENERATED_FILES, renderChart } from "../scripts/chart.ts";
import { readManifest } from "../scripts/manifest.ts";

const manifest = readManifest();
const read = (path: string) => readFileSync(`${CHART_DIRECTORY}${path}`, "utf8");
const values: Record<string, any> = parse(read("values.yaml"));
const schema = JSON.parse(read("values.schema.json"));
const templates = readdirSync(`${CHART_DIRECTORY}templates`).map((file) => read(`templates/${file}`)).join("\n");

/** Each value's path, down to those the template writes whole (a map of labels, the resources). */
function leaves(object: Record<string, unknown>, whole: string[], prefix = ""): string[] {
  return Object.entries(object).flatMap(([key, value]) => {
    const path = `${prefix}${key}`;
    return value && typeof value === "object" && !whole.includes(path) ? leaves(value as Record<string, unknown>, whole, `${path}.`) : [path];
  });
}

describe("chart: made from k8s.yaml", () => {
  test("chart/ is what npm run manifest writes from k8s.yaml: run it after any change to k8s.yaml", () => {
    const chart = renderChart(manifest.text);
    assert.deepEqual(Object.keys(chart).sort(), [...GENERATED_FILES].sort());
    for (const path of GENERATED_FILES) assert.equal(read(path), chart[path], `chart/${path}`);
  });

  test("values.yaml's defaults are what k8s.yaml sets", () => {
    const deployment = manifest.find("Deployment");
    const subject = manifest.find("ClusterRoleBinding").subjects[0];
    assert.equal(values.namespace, manifest.find("Namespace", values.namespace).metadata.name);
    assert.deepEqual([values.metacontroller.namespace, values.metacontroller.serviceAccount], [subject.namespace, subject.name]);
    assert.deepEqual([values.replicas, values.resources], [deployment.spec.replicas, deployment.spec.template.spec.containers[0].resources]);
    assert.equal(values.hookUrl, "", "the webhook's own Service unless set");
  });

  test("the chart asks for the Kubernetes k8s.yaml's first lines name, and is the package's version", () => {
    const chart = parse(read("Chart.yaml"));
    const kubernetes = /Kubernetes\s+(1\.\d+)\s+or\s+later/.exec(manifest.text.slice(0, 300))?.[1];
    assert.equal(chart.kubeVersion, `>=${kubernetes}.0-0`);
    assert.equal(chart.version, JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version);
  });

  test("no name of the install's Namespace is left in the template but as the value", () => {
    assert.doesNotMatch(read("templates/k8s.yaml"), new RegExp(`(?<![\\w-])${values.namespace}(?![\\w-])`));
  });
});

describe("chart: its values", () => {
  const whole = ["metacontroller.podLabels", "resources"];
  test("the templates read every value values.yaml has, and none it has not", () => {
    const read = [...new Set([...templates.matchAll(/\.Values\.([\w.]+)/g)].map(([, path]) => path!))].sort();
    assert.deepEqual(read, leaves(values, whole).sort());
  });

  test("the schema names every value, and values.yaml's defaults pass it", () => {
    const ajv = new Ajv({ strict: false });
    const validate = ajv.compile(schema);
    assert.ok(validate(values), JSON.stringify(validate.errors));
    const named = (node: any, prefix = ""): string[] =>
      Object.entries<any>(node.properties ?? {}).flatMap(([key, inner]) => (inner.properties && !whole.includes(`${prefix}${key}`) ? named(inner, `${prefix}${key}.`) : [`${prefix}${key}`]));
    assert.deepEqual(named(schema).sort(), leaves(values, whole).sort());
  });

  // helm checks values against the schema before it renders: a value that
  // would make a bad Namespace, a URL with a path (the hooks' paths are
  // added), or no replica is refused by name, installing nothing.
  test("the schema refuses a value that would break the install", () => {
    const validate = new Ajv({ strict: false }).compile(schema);
    for (const [what, changed] of Object.entries({
      "a Namespace that is no DNS label": { namespace: "Meta_Project" },
      "a hook URL with a path": { hookUrl: "http://127.0.0.1:8080/sync" },
      "a hook URL that is no URL": { hookUrl: "127.0.0.1:8080" },
      "no replica": { replicas: 0 },
      "a setting the chart does not have": { image: "node:24" },
    })) {
      assert.equal(validate({ ...values, ...changed }), false, what);
    }
    assert.equal(validate({ ...values, hookUrl: "http://127.0.0.1:8080" }), true, "a webhook outside the cluster");
  });
});
