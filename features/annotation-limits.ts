/**
 * # Annotation limits: a description too large for its Namespace is refused
 *
 * The fields of a Project's spec that sync.ts names become annotations on its Namespace,
 * and the API server refuses an object whose annotations are over 256 KiB:
 * Metacontroller would retry that create or update for ever, and the
 * Project would never change again. The CRD's length limits keep such a spec
 * out at admission; this feature catches the Projects stored before them,
 * or where the CRD was not updated, with a status that says what to shorten,
 * and the Namespace kept as it is.
 */
import type { Namespace } from "../sync.ts";
import type { Feature } from "./index.ts";

// Its words, none left once it is taken away (take-away.ts's VOCABULARY says which).
export const VOCABULARY = ["annotation limit", "annotation limits", "ANNOTATIONS_MAX_BYTES", "WORST_BYTES_PER_UNIT", "WORST_FIXED_BYTES"] as const;

// The API server refuses an object whose annotations, keys and values counted
// in UTF-8 bytes, add up to more than 256 KiB. Metacontroller's apply keeps a
// JSON copy of the whole desired object in one more annotation, so the
// description counts twice, and more where Go's JSON escapes it (`<`, `>`,
// `&`, U+2028 and U+2029 become six bytes each). The label Metacontroller
// adds to that copy gets a fixed allowance.
export const ANNOTATIONS_MAX_BYTES = 256 * 1024;
// Spelled out, not taken from sync.ts: a feature imports only types from it
// (annotation-limits.test.ts proves the spellings agree).
export const LAST_APPLIED_ANNOTATION = "metacontroller.k8s.io/last-applied-configuration";
const ALLOWANCE_FOR_METACONTROLLER_LABELS = 256;
const utf8 = new TextEncoder();

export function annotationBytes(namespace: Namespace): number {
  const bytes = (text: string) => utf8.encode(text).length;
  let total = bytes(LAST_APPLIED_ANNOTATION) + bytes(asGoJson(namespace)) + ALLOWANCE_FOR_METACONTROLLER_LABELS;
  for (const [key, value] of Object.entries<string | undefined>(namespace.metadata.annotations)) total += bytes(key) + bytes(value ?? "");
  return total;
}

/** JSON as Go writes it, escaping `<`, `>`, `&`, U+2028 and U+2029, as Kubernetes tools store copies of objects. */
export function asGoJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

// Counting means encoding the whole object, on every sync. Skip it when even
// the worst case is under the limit, as it is for all but huge descriptions:
// a UTF-16 unit takes at most 3 bytes as itself plus 6 escaped in the copy,
// and the rest (keys, the copy's JSON around the values, the label allowance,
// a 63-character name, the features' labels) stays under a fixed kilobyte.
export const WORST_BYTES_PER_UNIT = 9;
export const WORST_FIXED_BYTES = 1024;

// Read by any name: the fields are the core's to choose, none at all included.
type Annotations = Record<string, string | undefined>;

function mayExceedAnnotationLimit(annotations: Annotations): boolean {
  const units = Object.values(annotations).reduce((sum, value) => sum + (value?.length ?? 0), 0);
  return WORST_FIXED_BYTES + WORST_BYTES_PER_UNIT * units > ANNOTATIONS_MAX_BYTES;
}

export const annotationLimits: Feature = {
  spec: {},
  children: {},
  related: {},
  refusals: ["SpecTooLarge"],
  reasons: [],
  refuse: (namespace) => {
    const annotations: Annotations = namespace.metadata.annotations;
    if (!mayExceedAnnotationLimit(annotations)) return undefined;
    const bytes = annotationBytes(namespace);
    if (bytes <= ANNOTATIONS_MAX_BYTES) return undefined;
    const fields = Object.keys(annotations);
    const longest = Object.entries(annotations).reduce((most, field) => ((field[1]?.length ?? 0) > (most[1]?.length ?? 0) ? field : most))[0];
    return {
      status: "False",
      reason: "SpecTooLarge",
      message:
        `${fields.join(" and ")} would make ${bytes} bytes of annotations on Namespace ${namespace.metadata.name}, ` +
        `counting the copy Metacontroller keeps; Kubernetes allows ${ANNOTATIONS_MAX_BYTES}. Shorten the ${longest}.`,
    };
  },
  plan: () => ({ children: [] }),
};
