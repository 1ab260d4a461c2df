// The whole shareable state lives in the URL hash, described by ONE props table (like
// TensorFlow Playground's state.ts): name, type, default. A link reproduces the demo exactly.

export const PROPS = [
  { name: "program", type: "program", def: null },  // the source, deflate + base64url ("z.") or base64url ("b.")
  { name: "example", type: "string", def: null },   // or an example id when the program is unchanged
  { name: "pass", type: "int", def: 0 },
  { name: "step", type: "int", def: null },          // null: the end of the pass
  { name: "node", type: "string", def: null },       // the node open in the inspector
  { name: "speed", type: "number", def: 1 },
  { name: "projector", type: "bool", def: false },
  { name: "theme", type: "string", def: null },      // null: follow the system
];

function b64urlEncode(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
function b64urlDecode(text) {
  const s = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}
async function pipe(bytes, stream) {
  const res = new Response(new Blob([bytes]).stream().pipeThrough(stream));
  return new Uint8Array(await res.arrayBuffer());
}

export async function encodeProgram(text) {
  const raw = new TextEncoder().encode(text);
  if (typeof CompressionStream !== "undefined") {
    try {
      return "z." + b64urlEncode(await pipe(raw, new CompressionStream("deflate-raw")));
    } catch (_) { /* fall through */ }
  }
  return "b." + b64urlEncode(raw);
}

export async function decodeProgram(code) {
  if (!code) return null;
  try {
    if (code.startsWith("z.")) {
      return new TextDecoder().decode(await pipe(b64urlDecode(code.slice(2)), new DecompressionStream("deflate-raw")));
    }
    if (code.startsWith("b.")) return new TextDecoder().decode(b64urlDecode(code.slice(2)));
  } catch (_) {
    return null;
  }
  return null;
}

function parseValue(prop, raw) {
  if (raw == null) return prop.def;
  switch (prop.type) {
    case "int": {
      const n = parseInt(raw, 10);
      return Number.isFinite(n) ? n : prop.def;
    }
    case "number": {
      const n = parseFloat(raw);
      return Number.isFinite(n) ? n : prop.def;
    }
    case "bool":
      return raw === "1" || raw === "true";
    default:
      return raw;
  }
}

function formatValue(prop, value) {
  if (prop.type === "bool") return value ? "1" : null;
  return String(value);
}

// Read the hash into a plain object (program stays encoded; decode with decodeProgram).
export function readUrl(hash = location.hash) {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  const state = {};
  for (const p of PROPS) state[p.name] = parseValue(p, params.get(p.name));
  return state;
}

export function buildHash(state) {
  const params = new URLSearchParams();
  for (const p of PROPS) {
    const v = state[p.name];
    if (v == null || v === p.def) continue;
    const f = formatValue(p, v);
    if (f != null) params.set(p.name, f);
  }
  const s = params.toString();
  return s ? "#" + s : "";
}

// Replace (not push) so stepping does not flood the history.
export function writeUrl(state) {
  const hash = buildHash(state);
  const url = location.pathname + location.search + hash;
  if (url !== location.pathname + location.search + location.hash) history.replaceState(null, "", url);
}

export function shareUrl(state) {
  return location.origin + location.pathname + buildHash(state);
}
