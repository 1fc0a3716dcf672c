/**
 * The text edits memory_write makes, as pure functions over a file's content: appending to a
 * note, and adding or replacing one `## Section` of MEMORY.md. Each returns the whole new
 * content, ending in one newline.
 */

/** `text` without trailing whitespace or leading blank lines: what is written. */
export function cleanEntry(text: string): string {
  return text
    .replace(/\r\n?/g, "\n")
    .replace(/^(\s*\n)+/, "")
    .trimEnd();
}

/**
 * `current` with `entry` appended on lines of its own, after a blank line when the file ends
 * with a heading (trailing whitespace of `current` is dropped).
 */
export function appendEntry(current: string, entry: string): string {
  const body = cleanEntry(entry);
  const before = current.replace(/\r\n?/g, "\n").replace(/\s+$/, "");
  if (before === "") return `${body}\n`;
  const lastLine = before.slice(before.lastIndexOf("\n") + 1);
  return `${before}\n${/^ {0,3}#{1,6}(\s|$)/.test(lastLine) ? "\n" : ""}${body}\n`;
}

/** A new note: `# <title>` (a daily note's date, or MEMORY.md), a blank line, then `entry`. */
export function newNote(title: string, entry: string): string {
  return `# ${title}\n\n${cleanEntry(entry)}\n`;
}

/**
 * `doc` with the body of its `## <section>` heading replaced by `entry` (the body runs to the
 * next `#` or `##` heading; `###` subsections belong to it, headings in code fences do not
 * count), or with that section appended at the end when there is none. The heading is matched
 * case-insensitively, with whitespace collapsed. `replaced` tells which happened.
 */
export function setSection(doc: string, section: string, entry: string): { text: string; replaced: boolean } {
  const body = cleanEntry(entry).split("\n");
  const lines = doc.replace(/\r\n?/g, "\n").replace(/\s+$/, "").split("\n");
  if (lines.length === 1 && lines[0] === "") lines.pop();
  const headings = headingLines(lines);
  const wanted = sectionKey(section);
  const at = headings.find((h) => h.level === 2 && sectionKey(h.title) === wanted);
  if (at === undefined) {
    const before = lines.length > 0 ? [...lines, ""] : [];
    return { text: `${[...before, `## ${section}`, "", ...body].join("\n")}\n`, replaced: false };
  }
  const next = headings.find((h) => h.index > at.index && h.level <= 2);
  const after = next === undefined ? [] : ["", ...lines.slice(next.index)];
  const text = [...lines.slice(0, at.index + 1), "", ...body, ...after].join("\n");
  return { text: `${text}\n`, replaced: true };
}

/**
 * A section name as given by the model, cleaned: surrounding whitespace and leading `#` marks
 * removed. Undefined when nothing is left or it spans lines.
 */
export function sectionTitle(section: string): string | undefined {
  const title = section
    .trim()
    .replace(/^#+\s*/, "")
    .trim();
  if (title === "" || /[\r\n]/.test(title)) return undefined;
  return title;
}

interface Heading {
  index: number;
  level: number;
  title: string;
}

/** The ATX headings of `lines` outside fenced code blocks. */
function headingLines(lines: readonly string[]): Heading[] {
  const out: Heading[] = [];
  let inFence = false;
  lines.forEach((line, index) => {
    if (/^ {0,3}(```|~~~)/.test(line)) inFence = !inFence;
    if (inFence) return;
    const m = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line) ?? /^ {0,3}(#{1,6})$/.exec(line);
    if (m) out.push({ index, level: m[1]?.length ?? 0, title: m[2] ?? "" });
  });
  return out;
}

function sectionKey(title: string): string {
  return title.trim().replace(/\s+/g, " ").toLowerCase();
}
