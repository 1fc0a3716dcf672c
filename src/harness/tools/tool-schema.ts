/**
 * A tool's zod parameters as the model sees them: the JSON Schema sent to the provider, the
 * one-line summary of the parameters, and zod's issues rewritten as one sentence each that
 * names the field, what was found and what was expected.
 */
import { z } from "zod";
import type { Tool } from "./types.js";

/** A JSON Schema node as `z.toJSONSchema` produces it. */
export type JsonSchema = z.core.JSONSchema.JSONSchema;

/**
 * The JSON Schema of a tool's arguments, for the provider: `z.toJSONSchema` of the input side
 * (a field with a default is optional for the model), without the top-level `$schema`, which
 * constrains nothing and which the Anthropic SDK's own zod helper strips as well, and without
 * the ±(2^53 − 1) bounds zod writes on every integer (tokens that tell the model nothing).
 * Deep-frozen, so the one object built at registration is what every request carries, byte
 * for byte.
 * Throws a TypeError naming the tool when the parameters are not a zod object or use a type
 * JSON Schema cannot express (a date, a function, a custom check without an input type).
 */
export function toolJsonSchema(tool: Tool): JsonSchema {
  if (tool.jsonSchema !== undefined) return givenJsonSchema(tool);
  const parameters: unknown = tool.parameters;
  if (!(parameters instanceof z.ZodObject)) {
    throw new TypeError(
      `tool "${tool.name}": parameters must be a zod object schema (z.strictObject({...}))`,
    );
  }
  let schema: JsonSchema;
  try {
    schema = z.toJSONSchema(parameters, { io: "input", override: dropSafeIntegerBounds });
  } catch (err) {
    throw new TypeError(
      `tool "${tool.name}": its parameters cannot be expressed as JSON Schema (${err instanceof Error ? err.message : String(err)})`,
      { cause: err },
    );
  }
  const { $schema: _dialect, ...rest } = schema;
  return deepFreeze(rest);
}

/**
 * A tool's own JSON Schema (Tool.jsonSchema), copied without `$schema` and deep-frozen. Throws a
 * TypeError naming the tool when it is not an object schema.
 */
function givenJsonSchema(tool: Tool): JsonSchema {
  const given: unknown = tool.jsonSchema;
  if (!isSchema(given) || given.type !== "object")
    throw new TypeError(`tool "${tool.name}": its JSON Schema must be an object schema (type: "object")`);
  const { $schema: _dialect, ...rest } = structuredClone(given);
  return deepFreeze(rest);
}

/** `path (string, required), offset (integer ≥ 1, optional), mode ("a" | "b", optional)`. */
export function describeParameters(schema: JsonSchema): string {
  const required = new Set(schema.required ?? []);
  const entries = Object.entries(schema.properties ?? {});
  if (entries.length === 0) return "none";
  return entries
    .map(([key, prop]) => {
      const type = isSchema(prop) ? describeType(prop) : "any value";
      return `${key} (${type}, ${required.has(key) ? "required" : "optional"})`;
    })
    .join(", ");
}

/**
 * Every problem zod found, one line each, in the words of the old hand-written validator:
 * `missing required property "path"`, `"count" must be an integer, got a string`,
 * `"count" must be ≥ 1, got 0`, `"mode" must be one of "fast", "slow", got "warp"`,
 * `"tags"[1] must be a string, got the number 1`, `unexpected property "colour"`.
 * Issues must carry their input (`safeParse(value, { reportInput: true })`).
 */
export function argumentProblems(issues: readonly z.core.$ZodIssue[], schema: JsonSchema): string[] {
  return issues.flatMap((issue) => problem(issue, schema));
}

function problem(issue: z.core.$ZodIssue, root: JsonSchema): string[] {
  const where = describePath(issue.path);
  const input = issue.input;
  switch (issue.code) {
    case "invalid_type": {
      const last = issue.path.at(-1);
      if (input === undefined && typeof last === "string") {
        const parent = issue.path.length > 1 ? ` in ${describePath(issue.path.slice(0, -1))}` : "";
        return [`missing required property "${last}"${parent}`];
      }
      const node = schemaAt(root, issue.path);
      if (node?.enum || node?.const !== undefined) {
        return [`${where} must be ${oneOf(node.enum ?? [node.const])}, got ${typeName(input)}`];
      }
      const expected = node ? baseType(node) : issue.expected === "int" ? "integer" : issue.expected;
      return [`${where} must be ${article(expected)}, got ${typeName(input)}`];
    }
    case "too_small":
    case "too_big": {
      const small = issue.code === "too_small";
      const bound = Number(small ? issue.minimum : issue.maximum);
      const inclusive = issue.inclusive !== false;
      if (issue.origin === "string" || issue.origin === "array") {
        const unit = issue.origin === "string" ? "characters" : "items";
        const size = typeof input === "string" || Array.isArray(input) ? `, got ${input.length}` : "";
        return [`${where} must have ${small ? "at least" : "at most"} ${bound} ${unit}${size}`];
      }
      const sign = small ? (inclusive ? "≥" : ">") : inclusive ? "≤" : "<";
      return [`${where} must be ${sign} ${bound}, got ${shown(input)}`];
    }
    case "invalid_value":
      return [
        `${where} must be ${oneOf(issue.values)}, got ${typeof input === "string" ? shown(input) : typeName(input)}`,
      ];
    case "unrecognized_keys": {
      const parent = issue.path.length > 0 ? ` in ${where}` : "";
      return issue.keys.map((key) => `unexpected property "${key}"${parent}`);
    }
    case "invalid_union": {
      const node = schemaAt(root, issue.path);
      const expected = node ? describeType(node) : "one of the allowed types";
      return [`${where} must be ${expected}, got ${typeName(input)}`];
    }
    case "invalid_format":
      return [`${where} must be a valid ${issue.format}, got ${shown(input)}`];
    case "not_multiple_of":
      return [`${where} must be a multiple of ${issue.divisor}, got ${shown(input)}`];
    default:
      return [`${where}: ${issue.message}`];
  }
}

/** `"path"`, `"tags"[1]`, `"options"."mode"`; the arguments object itself is "arguments". */
function describePath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return "arguments";
  return path
    .map((key, i) => {
      if (typeof key === "number") return `[${key}]`;
      const name = JSON.stringify(String(key));
      return i === 0 ? name : `.${name}`;
    })
    .join("");
}

/** The schema node at `path`, following properties and array items; undefined when unknown. */
function schemaAt(root: JsonSchema, path: readonly PropertyKey[]): JsonSchema | undefined {
  let node: JsonSchema | undefined = root;
  for (const key of path) {
    if (node === undefined) return undefined;
    const next: unknown = typeof key === "number" ? node.items : node.properties?.[String(key)];
    node = isSchema(next) ? next : undefined;
  }
  return node;
}

/** A type with its bounds and item type: `integer ≥ 1 ≤ 10`, `array of string`, `"a" | "b"`. */
function describeType(node: JsonSchema): string {
  if (node.enum || node.const !== undefined) return literals(node.enum ?? [node.const]).join(" | ");
  const variants = node.anyOf ?? node.oneOf;
  if (variants) return variants.map(describeType).join(" | ");
  const type = baseType(node);
  if (type === "array" && isSchema(node.items)) return `array of ${describeType(node.items)}`;
  if (type !== "integer" && type !== "number") return type;
  const bounds = [
    bound("≥", node.minimum),
    bound(">", node.exclusiveMinimum),
    bound("≤", node.maximum),
    bound("<", node.exclusiveMaximum),
  ].filter((b) => b !== "");
  return bounds.length > 0 ? `${type} ${bounds.join(" ")}` : type;
}

function bound(sign: string, value: unknown): string {
  return typeof value === "number" ? `${sign} ${value}` : "";
}

function dropSafeIntegerBounds({ jsonSchema }: { jsonSchema: JsonSchema }): void {
  if (jsonSchema.type !== "integer") return;
  if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
  if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
}

function baseType(node: JsonSchema): string {
  if (Array.isArray(node.type)) return node.type.join(" or ");
  return node.type ?? "value";
}

/** `"x"` for one allowed value, `one of "fast", "slow"` for several. */
function oneOf(values: readonly unknown[]): string {
  const listed = literals(values);
  return listed.length === 1 ? `${listed[0]}` : `one of ${listed.join(", ")}`;
}

function literals(values: readonly unknown[]): string[] {
  return values.map((v) => JSON.stringify(v) ?? String(v));
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number" && Number.isInteger(value)) return `the number ${value}`;
  if (typeof value === "string") return "a string";
  return article(typeof value);
}

/** A short rendering of a scalar the model sent: numbers and short strings as they are. */
function shown(value: unknown): string {
  if (typeof value === "number") return String(value);
  if (typeof value === "string") {
    return value.length <= 60 ? JSON.stringify(value) : `${JSON.stringify(value.slice(0, 57))}…`;
  }
  return typeName(value);
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
