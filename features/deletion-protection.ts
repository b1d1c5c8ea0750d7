/**
 * # Deletion protection: a Project that says so keeps its Namespace
 *
 * Deleting a Project deletes its Namespace and everything in it, and so does
 * `kubectl delete namespace`. A Project with `spec.deletionProtection: true`
 * labels every Namespace it owns with its name; k8s.yaml's two
 * deletion-protection policies then make the API server refuse to delete the
 * Project, and the Namespaces, until the flag is lifted. This file only
 * writes the label: the refusing is the API server's.
 */
import * as v from "valibot";
import type { Feature } from "./index.ts";

// Its words, none left once it is taken away (take-away.ts's VOCABULARY says which).
export const VOCABULARY = ["deletion protection", "deletionProtection"] as const;

// The label's value is the Project's name, so that a refusal can name whose
// Namespace it is. Spelled out, not built from sync.ts's GROUP and PARENT: a
// feature imports only types from sync.ts (deletion-protection.test.ts
// proves the spellings agree).
export const PROTECTED_BY_LABEL = "agrrh.com/protected-by-project";

const spec = { deletionProtection: v.nullish(v.boolean()) };

export const deletionProtection: Feature<typeof spec> = {
  spec,
  children: {},
  related: {},
  refusals: [],
  reasons: [],
  // Every Namespace the Project owns, older names' too, and whatever else is
  // wrong: the protection follows the spec, always.
  plan: ({ project, spec }) => ({
    children: [],
    everyNamespaceLabels: spec.deletionProtection ? { [PROTECTED_BY_LABEL]: project.metadata.name } : undefined,
  }),
};
