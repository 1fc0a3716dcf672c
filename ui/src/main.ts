/**
 * The control page's entry: takes the token out of the address (`/ui/#token=…`) into session
 * storage, then renders the App into `#app`.
 */
import { html, render } from "htm/preact";
import { App } from "./app.js";
import { captureToken } from "./lib/token.js";

const initialToken = captureToken({ location, storage: sessionStorage, history });
const root = document.getElementById("app");
if (root) render(html`<${App} initialToken=${initialToken} />`, root);
