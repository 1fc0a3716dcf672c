/**
 * The login form, the only thing shown after a 401: a token field and Sign in. The token is tried
 * on `/v1/admin/overview`; refused, it says so and stays.
 */
import { html } from "htm/preact";
import { useState } from "preact/hooks";

/** The login screen; `signIn` resolves true when the token was accepted. */
export function LoginView({
  signIn,
  refused,
}: {
  signIn(token: string): Promise<boolean>;
  refused: boolean;
}) {
  const [token, setToken] = useState("");
  const [busy, setBusy] = useState(false);
  const [failed, setFailed] = useState(refused);
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const submit = (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setProblem(undefined);
    signIn(token.trim())
      .then(
        (ok) => setFailed(!ok),
        (err: unknown) => setProblem(err instanceof Error ? err.message : String(err)),
      )
      .finally(() => setBusy(false))
      .catch(() => {});
  };
  return html`<main class="login" data-view="login">
    <form onSubmit=${submit} aria-labelledby="h-login">
      <h1 id="h-login">Switchyard</h1>
      <p class="muted">Use the gateway's token (<code>gateway.auth.token</code>; <code>switchyard ui</code> prints a link that carries it).</p>
      <label for="token">Token</label>
      <input id="token" name="token" type="password" autocomplete="current-password" required value=${token}
        onInput=${(e: Event) => setToken((e.target as HTMLInputElement).value)} />
      ${failed && html`<p class="notice error" role="alert">That token was refused</p>`}
      ${problem && html`<p class="notice error" role="alert">${problem}</p>`}
      <button type="submit" disabled=${busy}>Sign in</button>
    </form>
  </main>`;
}
