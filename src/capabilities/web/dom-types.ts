/**
 * The little of the DOM the page converter touches, written out because the project compiles
 * without the DOM library: linkedom's nodes satisfy these shapes. Nothing here runs.
 */

/** A DOM node as the converter walks it. */
export interface DomNode {
  readonly nodeType: number;
  readonly nodeName: string;
  readonly childNodes: ArrayLike<DomNode>;
  readonly parentNode: DomNode | null;
  /** A text node's text. */
  readonly data?: string;
  textContent: string | null;
  remove(): void;
  getAttribute?(name: string): string | null;
}

/** A parsed document. */
export interface DomDocument extends DomNode {
  readonly title: string;
  readonly body: DomNode | null;
  readonly documentElement: DomNode | null;
}
