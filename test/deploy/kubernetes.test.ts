// Every manifest in deploy/kubernetes validated offline: Kubernetes' own objects against the API's
// JSON schemas (the npm package kubernetes-models, generated from Kubernetes' OpenAPI spec), the
// agent-sandbox objects against that project's CRD schemas (test/deploy/agent-sandbox-crds.json,
// with ajv), and what the deployment relies on (replica names, drain within the grace period,
// no privilege in the base, the router's config matching deploy/nginx) checked by name.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { Ajv } from "ajv";
import YAML from "yaml";
import { distRoot } from "../../hub/config/config.js";

const ROOT = path.join(distRoot(), "..");
const K8S = path.join(ROOT, "deploy", "kubernetes");
type Obj = Record<string, any>;
type Doc = { file: string; obj: Obj };

function yamlFiles(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true }).map(String).filter((f) => f.endsWith(".yaml")).sort().map((f) => path.join(dir, f));
}

function load(): Doc[] {
  return yamlFiles(K8S).flatMap((file) =>
    YAML.parseAllDocuments(fs.readFileSync(file, "utf8")).map((d) => {
      assert.deepEqual(d.errors, [], `${file} is not valid YAML`);
      return { file: path.relative(K8S, file), obj: d.toJSON() as Obj };
    }),
  );
}

const docs = load();
const isKustomization = (d: Doc) => d.obj.kind === "Kustomization";
const isPatch = (d: Doc) => d.file.startsWith("multi-tenant/") && !isKustomization(d);
const resources = docs.filter((d) => !isKustomization(d) && !isPatch(d));
const find = (kind: string, name: string) => resources.find((d) => d.obj.kind === kind && d.obj.metadata?.name === name)?.obj;

/** kubernetes-models' validator for a core/v1 or group/version kind; undefined when the package is missing. */
async function kubernetesModel(apiVersion: string, kind: string): Promise<{ validate(): void } & (new (o: Obj) => { validate(): void }) | undefined> {
  const module = apiVersion.includes("/") ? `kubernetes-models/${apiVersion}/${kind}` : `kubernetes-models/v1/${kind}`;
  try {
    return ((await import(module)) as Obj)[kind];
  } catch (err) {
    if ((err as { code?: string }).code === "ERR_MODULE_NOT_FOUND" && String(err).includes("kubernetes-models")) return undefined;
    throw err;
  }
}

async function schemaValidator(name: string): Promise<((data: unknown) => boolean) & { errors?: unknown[] }> {
  return ((await import(`kubernetes-models/_schemas/${name}`)) as Obj).validate;
}

/** The CRD schemas, strict like `kubeconform -strict`: an unknown field (a typo) is an error. */
function strictCrdValidators() {
  const crds = JSON.parse(fs.readFileSync(path.join(ROOT, "test", "deploy", "agent-sandbox-crds.json"), "utf8")) as { kinds: Record<string, Obj> };
  const strict = (s: Obj): Obj => {
    if (!s || typeof s !== "object") return s;
    const out: Obj = Array.isArray(s) ? s.map(strict) : Object.fromEntries(Object.entries(s).map(([k, v]) => [k, strict(v)]));
    if (!Array.isArray(s) && s.properties && s.additionalProperties === undefined && !s["x-kubernetes-preserve-unknown-fields"]) {
      out.additionalProperties = false;
      // apiVersion/kind/metadata are checked by the API server's own types, not the CRD
      if (s.properties.metadata?.type === "object" && !s.properties.metadata.properties) out.properties.metadata = {};
    }
    return out;
  };
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  return new Map(Object.entries(crds.kinds).map(([key, schema]) => [key, ajv.compile(strict(schema))]));
}

describe("deploy/kubernetes manifests", () => {
  it("are all well-formed objects, and every kustomization names files that exist", () => {
    assert.ok(resources.length >= 10, `only ${resources.length} objects found under ${K8S}`);
    for (const { file, obj } of docs) {
      assert.ok(obj.apiVersion && obj.kind, `${file}: an object needs apiVersion and kind`);
      if (!isKustomization({ file, obj })) continue;
      const dir = path.dirname(path.join(K8S, file));
      for (const entry of [...(obj.resources ?? []), ...(obj.patches ?? []).map((p: Obj) => p.path).filter(Boolean)]) {
        assert.ok(fs.existsSync(path.join(dir, entry)), `${file} names ${entry}, which does not exist`);
      }
    }
  });

  it("validate against Kubernetes' API schemas (kubernetes-models)", async (t) => {
    const probe = await kubernetesModel("v1", "Service");
    if (!probe) return t.skip("the npm package kubernetes-models is not installed (a devDependency): npm install --save-dev kubernetes-models");
    const podSpec = await schemaValidator("IoK8sApiCoreV1PodSpec");
    const pvc = await schemaValidator("IoK8sApiCoreV1PersistentVolumeClaim");
    const checkSchema = (v: typeof podSpec, data: unknown, where: string) => assert.ok(v(data), `${where}: ${JSON.stringify(v.errors)}`);
    let checked = 0;
    for (const { file, obj } of resources) {
      const where = `${file} ${obj.kind}/${obj.metadata?.name}`;
      if (obj.apiVersion.includes("agents.x-k8s.io")) {
        // the agent-sandbox kinds embed a PodSpec and PVC templates: those are Kubernetes' own types
        if (obj.spec.podTemplate) checkSchema(podSpec, obj.spec.podTemplate.spec, `${where} podTemplate.spec`);
        for (const claim of obj.spec.volumeClaimTemplates ?? []) checkSchema(pvc, { apiVersion: "v1", kind: "PersistentVolumeClaim", ...claim }, `${where} volumeClaimTemplates`);
        continue;
      }
      const Model = await kubernetesModel(obj.apiVersion, obj.kind);
      assert.ok(Model, `${where}: no schema for ${obj.apiVersion} ${obj.kind}`);
      assert.doesNotThrow(() => new Model(obj).validate(), (err: Error) => assert.fail(`${where}: ${err.message}`));
      checked++;
    }
    // and the validator is not a rubber stamp
    const bad = structuredClone(find("StatefulSet", "agentbox")!);
    bad.spec.template.spec.containers[0].securityContext.allowPrivilegeEscalation = "no";
    const StatefulSet = (await kubernetesModel("apps/v1", "StatefulSet"))!;
    assert.throws(() => new StatefulSet(bad).validate(), /allowPrivilegeEscalation must be boolean/);
    assert.ok(checked >= 8);
  });

  it("validate the agent-sandbox objects against its v1beta1 CRD schemas, unknown fields refused", () => {
    const validators = strictCrdValidators();
    const sandboxes = resources.filter((d) => d.obj.apiVersion.includes("agents.x-k8s.io"));
    assert.deepEqual(new Set(sandboxes.map((d) => d.obj.kind)), new Set(["Sandbox", "SandboxTemplate", "SandboxWarmPool", "SandboxClaim"]));
    for (const { file, obj } of sandboxes) {
      const validate = validators.get(`${obj.apiVersion}/${obj.kind}`);
      assert.ok(validate, `${file}: ${obj.apiVersion} ${obj.kind} is not a kind of agent-sandbox's CRDs`);
      assert.ok(validate(obj), `${file} ${obj.kind}: ${JSON.stringify(validate.errors)}`);
    }
    const typo = structuredClone(sandboxes.find((d) => d.obj.kind === "SandboxClaim")!.obj);
    typo.spec.warmPoolRefs = typo.spec.warmPoolRef;
    assert.equal(validators.get(`${typo.apiVersion}/SandboxClaim`)!(typo), false);
  });

  it("name each replica after its pod and drain within the grace period", () => {
    const sts = find("StatefulSet", "agentbox")!;
    const pod = sts.spec.template.spec;
    const env = Object.fromEntries(pod.containers[0].env.map((e: Obj) => [e.name, e]));
    assert.equal(env.AGENTBOX_REPLICA.valueFrom.fieldRef.fieldPath, "metadata.name");
    assert.equal(env.AGENTBOX_API_KEY.valueFrom.secretKeyRef.name, find("Secret", "agentbox-api-key")!.metadata.name);
    assert.ok(Number(env.AGENTBOX_DRAIN_MS.value) < pod.terminationGracePeriodSeconds * 1000, "the drain must end before Kubernetes' SIGKILL");
    assert.equal(pod.containers[0].readinessProbe.httpGet.path, "/readyz");
    assert.equal(pod.containers[0].livenessProbe.httpGet.path, "/healthz");
    assert.equal(sts.spec.volumeClaimTemplates[0].metadata.name, "workspace");
    // per-pod DNS names come from the StatefulSet's headless Service, which keeps draining pods
    const headless = find("Service", sts.spec.serviceName)!;
    assert.equal(headless.spec.clusterIP, "None");
    assert.equal(headless.spec.publishNotReadyAddresses, true);
  });

  it("give the base pods no privilege, and the multi-tenant overlay back the default capabilities", () => {
    const pod = find("StatefulSet", "agentbox")!.spec.template.spec;
    const sc = pod.containers[0].securityContext;
    assert.equal(sc.allowPrivilegeEscalation, false);
    assert.deepEqual(sc.capabilities.drop, ["ALL"]);
    assert.equal(pod.securityContext.runAsUser, 1000);
    assert.equal(pod.securityContext.runAsNonRoot, true);
    const patch = docs.find((d) => d.file === "multi-tenant/statefulset-root.yaml")!.obj;
    assert.equal(patch.spec.template.spec.securityContext.runAsUser, 0);
    assert.equal(patch.spec.template.spec.containers[0].securityContext.capabilities.drop, null);
  });

  it("ship the router config that deploy/nginx renders for them", async () => {
    const render = (await import(pathToFileURL(path.join(ROOT, "deploy", "nginx", "render.mjs")).href)) as { renderNginx(o: Obj): string };
    const expected = render.renderNginx({
      listen: "8080",
      kubernetes: { statefulset: "agentbox", pods: "agentbox.agentbox.svc.cluster.local", ready: "agentbox-ready.agentbox.svc.cluster.local", port: 8080, resolver: "kube-dns.kube-system.svc.cluster.local" },
      prefix: "/tmp",
      errorLog: "stderr",
    });
    const shipped = find("ConfigMap", "agentbox-router")!.data["nginx.conf"];
    assert.equal(shipped, expected, "regenerate router-configmap.yaml with the command in its header");
    // 2026-07-28: a context handle pins its request to the handle's pod as a session id does
    assert.match(shipped, /map \$http_mcp_param_context \$agentbox_context \{/);
    assert.match(shipped, /map \$agentbox_pin \$agentbox_target \{/);
    // and a task id (Mcp-Name of tasks/get|update|cancel) to the task's pod
    assert.match(shipped, /map "\$http_mcp_method \$http_mcp_name" \$agentbox_task \{/);
    assert.match(shipped, /"~\^agentbox-\[0-9\]\+\$" "\$agentbox_replica\.agentbox\.agentbox\.svc\.cluster\.local:8080";/);
  });
});
