/**
 * Zod helpers every settings schema uses (the config file and each channel module's section),
 * so a schema fragment can live next to the code it configures.
 */
import { z } from "zod";

/**
 * An object section: strict (an unknown key is an error naming it), and absent or YAML null (a
 * key whose children are all commented out, as in the README's examples) means "all defaults".
 */
export function section<T extends z.core.$ZodLooseShape>(shape: T) {
  return z.preprocess((value) => value ?? {}, z.strictObject(shape));
}

/** An optional object: YAML null (every child commented out) counts as not set. */
export function nullAsUnset<T extends z.ZodType>(schema: T) {
  return z.preprocess((value) => value ?? undefined, schema.optional());
}

/** A list of chat or user ids, written as strings or numbers, read as strings. */
export const idList = z.array(z.union([z.string().min(1), z.number().int()]).transform(String)).default([]);

/** A list of valid, case-insensitive regular expressions. */
export const regexList = z
  .array(
    z.string().refine(
      (p) => {
        try {
          new RegExp(p, "i");
          return true;
        } catch {
          return false;
        }
      },
      { message: "expected a valid regular expression" },
    ),
  )
  .default([]);
