/** Chat: talk to the agent as the terminal chat does (sender "ui"), answers streaming in. */
import { html } from "htm/preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { useApi } from "../components/app-context.js";
import { LiveDot } from "../components/widgets.js";
import { type ChatMessage, ConsoleChat } from "../lib/console-chat.js";

/** The sender id the page chats as. */
export const UI_SENDER = "ui";

/** The chat screen. */
export function ChatView() {
  const api = useApi();
  const [messages, setMessages] = useState<readonly ChatMessage[]>([]);
  const [connected, setConnected] = useState(false);
  const [text, setText] = useState("");
  const [sending, setSending] = useState(false);
  const chat = useRef<ConsoleChat | undefined>(undefined);
  const end = useRef<HTMLLIElement>(null);
  useEffect(() => {
    const c = new ConsoleChat({ api, sender: UI_SENDER, onChange: setMessages, onConnected: setConnected });
    chat.current = c;
    return () => c.close();
  }, [api]);
  useEffect(() => end.current?.scrollIntoView({ block: "end" }), [messages]);
  const submit = (e: Event) => {
    e.preventDefault();
    const t = text.trim();
    if (!t || !chat.current || sending) return;
    setText("");
    setSending(true);
    chat.current
      .send(t)
      .finally(() => setSending(false))
      .catch(() => {});
  };
  return html`<section data-view="chat" aria-labelledby="h-chat">
    <header class="view-head">
      <h1 id="h-chat">Chat</h1>
      <${LiveDot} connected=${connected} />
    </header>
    <p class="muted">You chat as <code>${UI_SENDER}</code> on the console channel; background messages (cron, heartbeat, assignments) appear here too.</p>
    <ol class="thread" aria-live="polite">
      ${messages.map(
        (
          m,
        ) => html`<li class=${`bubble ${m.role === "you" ? "user" : m.role === "agent" ? "assistant" : "note"}`} data-row=${m.key}
          aria-busy=${m.pending ? "true" : "false"}>
          <div class="who">${m.role === "you" ? "you" : m.role === "agent" ? (m.origin ? `agent · ${m.origin}` : "agent") : "notice"}</div>
          <div class="text">${m.text || (m.pending ? "…" : "")}</div>
        </li>`,
      )}
      <li ref=${end} class="end" aria-hidden="true"></li>
    </ol>
    <form class="chat-form" onSubmit=${submit}>
      <label for="chat-text">Message</label>
      <textarea id="chat-text" rows="3" value=${text} onInput=${(e: Event) => setText((e.target as HTMLTextAreaElement).value)}
        onKeyDown=${(e: KeyboardEvent) => {
          if (e.key === "Enter" && !e.shiftKey) submit(e);
        }}></textarea>
      <button type="submit" disabled=${sending || text.trim() === ""}>Send</button>
    </form>
  </section>`;
}
