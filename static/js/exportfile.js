// POST /api/export/html: the program and the view shown, answered as one offline .html file (app/api/routes/export.py).
import { CLIENT_ID } from "./api.js";

// view: {pass, step, node, theme, projector}; resolves to {blob, name}, throws with the server's reason
export async function exportHtml(source, view) {
  const r = await fetch("/api/export/html", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    // its own client id: "one run per client" must not cancel the run the page is showing
    body: JSON.stringify({ source, client_id: CLIENT_ID + ":export", ...view }),
  });
  if (!r.ok) {
    let message = `HTTP ${r.status}`;
    try {
      const body = await r.json();
      message = (body.error && body.error.message) || message;
    } catch (_) {
      // not JSON: the status says it
    }
    throw new Error(message);
  }
  const name = /filename="([^"]+)"/.exec(r.headers.get("content-disposition") || "");
  return { blob: await r.blob(), name: name ? name[1] : "flowgrad.html" };
}
