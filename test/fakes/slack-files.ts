/**
 * Files of the fake Slack workspace: the file objects messages carry and the bytes behind
 * `url_private` / `url_private_download`. As on Slack, a download without the bot token's
 * `Authorization: Bearer` header is answered 200 with an HTML sign-in page, not an error.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { SlackFileInput, SlackFileObject } from "./slack-types.js";

const LOGIN_PAGE =
  '<!DOCTYPE html><html lang="en-US"><head><meta charset="utf-8"><title>Slack</title></head>' +
  '<body><div id="page"><h1>Sign in to Fake</h1><form id="signin_form" method="post" action="/">' +
  '<input type="email" name="email"><input type="password" name="password"></form></div></body></html>';

interface StoredFile {
  readonly object: SlackFileObject;
  readonly content: Buffer;
}

function fileType(name: string): string {
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : "binary";
}

/** Files by id, served under `/files-pri/<team>-<id>/`. */
export class FileStore {
  readonly #files = new Map<string, StoredFile>();

  /** Adds (or replaces) a file; `base` is the server root ("http://127.0.0.1:PORT"). */
  add(input: SlackFileInput, base: string, teamId: string, nowSec: number): SlackFileObject {
    const content = typeof input.content === "string" ? Buffer.from(input.content) : input.content;
    const name = encodeURIComponent(input.name);
    const type = fileType(input.name);
    const object: SlackFileObject = {
      id: input.id,
      created: nowSec,
      timestamp: nowSec,
      name: input.name,
      title: input.name,
      mimetype: input.mimetype,
      filetype: type,
      pretty_type: type.toUpperCase(),
      ...(input.user !== undefined ? { user: input.user } : {}),
      size: content.length,
      mode: "hosted",
      is_external: false,
      is_public: false,
      url_private: `${base}/files-pri/${teamId}-${input.id}/${name}`,
      url_private_download: `${base}/files-pri/${teamId}-${input.id}/download/${name}`,
      permalink: `https://fake.slack.test/files/${input.user ?? "U0"}/${input.id}/${name}`,
    };
    this.#files.set(input.id, { object, content });
    return structuredClone(object);
  }

  /**
   * Serves GET/HEAD `/files-pri/<team>-<id>/[download/]<name>`; returns false for other paths.
   * With the bot token: the bytes, the file's content type and length. Without (or with a
   * wrong one): 200 text/html sign-in page. Unknown file: 404.
   */
  serve(req: IncomingMessage, res: ServerResponse, path: string, botToken: string): boolean {
    const match = /^\/files-pri\/[^/-]+-([^/]+)\/(?:download\/)?[^/]+$/.exec(path);
    if (!match || (req.method !== "GET" && req.method !== "HEAD")) return false;
    const file = this.#files.get(decodeURIComponent(match[1] ?? ""));
    const authorized = req.headers.authorization === `Bearer ${botToken}`;
    if (!authorized) {
      res.writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        "content-length": Buffer.byteLength(LOGIN_PAGE),
      });
      res.end(req.method === "HEAD" ? undefined : LOGIN_PAGE);
    } else if (!file) {
      res.writeHead(404, { "content-type": "text/plain", "content-length": 9 });
      res.end(req.method === "HEAD" ? undefined : "Not Found");
    } else {
      res.writeHead(200, {
        "content-type": file.object.mimetype,
        "content-length": file.content.length,
        "content-disposition": `attachment; filename*=UTF-8''${encodeURIComponent(file.object.name)}`,
      });
      res.end(req.method === "HEAD" ? undefined : file.content);
    }
    return true;
  }
}
