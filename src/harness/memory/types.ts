/**
 * Contracts of the file-based memory: search hits of the memory index, the daily notes the
 * prompt shows, and the workspace skills. Nothing here runs.
 */

/** One chunk of a memory file that matched a search, best first in a result list. */
export interface MemoryHit {
  /** Workspace-relative path with `/`: `MEMORY.md` or `memory/…`. */
  path: string;
  /** First line of the chunk, counting from 1. */
  startLine: number;
  /** Last line of the chunk (inclusive). */
  endLine: number;
  /** The matching part of the chunk on one line, matched terms wrapped in `**`. */
  snippet: string;
  /** Relevance, higher is better (the negated FTS5 bm25 rank); comparable within one search only. */
  score: number;
}

/** Options of {@link MemoryIndex.search}. */
export interface MemorySearchOptions {
  /** Hits returned at most; default 10, at most 100. */
  limit?: number;
  /** Stops the freshness scan that precedes the query. */
  signal?: AbortSignal;
  /**
   * Skip the freshness scan when one finished less than this many ms ago (recall on every turn
   * need not re-stat the memory files each time); default 0: always scan.
   */
  maxStalenessMs?: number;
}

/** What one freshness scan did. */
export interface MemoryRefreshStats {
  /** Files (re)read and indexed because they were new or their mtime or size changed. */
  indexed: number;
  /** Files dropped from the index because they are gone. */
  removed: number;
  /** Files whose mtime and size were unchanged: only stat'ed. */
  unchanged: number;
  /** Files left out with a warning (binary, too large, unreadable). */
  skipped: number;
}

/** A warning sink; a pino Logger fits. */
export interface MemoryWarnings {
  warn(context: Record<string, unknown>, message: string): void;
}

/** A workspace skill: `skills/<name>/SKILL.md` with `name` and `description` frontmatter. */
export interface Skill {
  name: string;
  /** One line (inner whitespace collapsed). */
  description: string;
  /** Workspace-relative path of its SKILL.md: `skills/<name>/SKILL.md`. */
  path: string;
}

/** A skill folder that could not be loaded, and why (one sentence). */
export interface SkillProblem {
  /** Workspace-relative path of the SKILL.md (or of the folder when it has none). */
  path: string;
  reason: string;
}

/** The skills of a workspace, both lists sorted by path (skills by name). */
export interface SkillSet {
  skills: Skill[];
  problems: SkillProblem[];
}
