/**
 * One bot's files for the fake Bot API: `getFile` metadata and the bytes served at
 * `GET /file/bot<token>/<file_path>`. File ids are per bot, as on Telegram.
 */

/** A file the fake can describe and serve. */
export interface StoredFile {
  readonly fileId: string;
  readonly fileUniqueId: string;
  readonly filePath: string;
  readonly content: Buffer;
  readonly fileName?: string;
  readonly mimeType?: string;
  /** False: getFile leaves out `file_size` and the download has no content-length. */
  readonly reportSize?: boolean;
}

/** What `addFile` takes. */
export interface AddFileInput {
  fileId: string;
  content: Buffer;
  /** Path under `/file/bot<token>/`; defaults to `documents/file_<n>`. */
  filePath?: string;
  fileName?: string;
  mimeType?: string;
  /**
   * Default true. False: `getFile` gives no `file_size` (Telegram may omit it) and the download
   * is sent chunked, without content-length, so a client learns the size only by reading.
   */
  reportSize?: boolean;
}

/** A bot's files by id and by path. */
export class FileStore {
  readonly #byId = new Map<string, StoredFile>();
  readonly #byPath = new Map<string, StoredFile>();
  #counter = 0;

  /** Adds (or replaces) a file and returns it. */
  add(input: AddFileInput): StoredFile {
    this.#counter += 1;
    const file: StoredFile = {
      fileId: input.fileId,
      fileUniqueId: `unique-${input.fileId}`.slice(0, 32),
      filePath: (input.filePath ?? `documents/file_${this.#counter}`).replace(/^\/+/, ""),
      content: input.content,
      ...(input.fileName !== undefined ? { fileName: input.fileName } : {}),
      ...(input.mimeType !== undefined ? { mimeType: input.mimeType } : {}),
      ...(input.reportSize === false ? { reportSize: false } : {}),
    };
    const previous = this.#byId.get(file.fileId);
    if (previous) this.#byPath.delete(previous.filePath);
    this.#byId.set(file.fileId, file);
    this.#byPath.set(file.filePath, file);
    return file;
  }

  /** Stores an upload under a fresh file id. */
  addUpload(content: Buffer, kind: string, fileName?: string, mimeType?: string): StoredFile {
    const fileId = `fake-${kind}-${this.#counter + 1}-${content.length}`;
    const extension = fileName?.match(/\.[A-Za-z0-9]+$/)?.[0] ?? "";
    return this.add({
      fileId,
      content,
      filePath: `${kind}s/file_${this.#counter + 1}${extension}`,
      ...(fileName !== undefined ? { fileName } : {}),
      ...(mimeType !== undefined ? { mimeType } : {}),
    });
  }

  byId(fileId: string): StoredFile | undefined {
    return this.#byId.get(fileId);
  }

  byPath(filePath: string): StoredFile | undefined {
    return this.#byPath.get(filePath);
  }
}
