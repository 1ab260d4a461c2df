#!/usr/bin/env bash
# Rebuild static/vendor/ from the npm registry: pinned versions, one minified ES module per library.
#
#   bash scripts/vendor.sh            # exact rebuild from static/vendor/npm/package-lock.json (npm ci)
#   bash scripts/vendor.sh --update   # re-resolve the pins below and rewrite the lock file
#
# Output (checked in; CI never runs npm):
#   static/vendor/codemirror.js        CodeMirror 6 + Python + one-dark theme (ESM bundle)
#   static/vendor/d3.js                d3-selection, d3-zoom, d3-interpolate (ESM bundle)
#   static/vendor/katex/katex.js       KaTeX (ESM bundle), katex.min.css (woff2 only), fonts/*.woff2
#   static/vendor/uplot/uplot.js       uPlot (ESM bundle), uPlot.min.css
#   static/vendor/qrcode.js            qrcode-generator (ESM bundle): the join code's QR code
#   static/vendor/gifenc.js            gifenc (ESM bundle): "Export animation" as GIF
#   static/vendor/licenses/*.txt       the licence text of every npm package bundled above
#   static/vendor/MANIFEST.md          file -> package, version, licence
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$ROOT/static/vendor"
LOCKDIR="$OUT/npm"
UPDATE=0
[ "${1:-}" = "--update" ] && UPDATE=1

# Pins: exact versions of the packages we import directly (transitive ones are pinned by the lock file).
PINS='{
  "codemirror": "6.0.2",
  "@codemirror/autocomplete": "6.20.4",
  "@codemirror/commands": "6.11.1",
  "@codemirror/language": "6.13.1",
  "@codemirror/lint": "6.9.8",
  "@codemirror/search": "6.7.2",
  "@codemirror/state": "6.7.6",
  "@codemirror/view": "6.43.15",
  "@codemirror/lang-python": "6.2.1",
  "@codemirror/theme-one-dark": "6.1.3",
  "d3-selection": "3.0.1",
  "d3-zoom": "3.0.1",
  "d3-interpolate": "3.0.2",
  "katex": "0.19.1",
  "uplot": "1.6.32",
  "qrcode-generator": "2.0.4",
  "gifenc": "1.0.3",
  "esbuild": "0.28.2"
}'

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
cd "$TMP"

cat > package.json <<EOF
{
  "name": "flowgrad-vendor",
  "private": true,
  "description": "Build-time only: bundles static/vendor/ (see scripts/vendor.sh)",
  "dependencies": $PINS
}
EOF

mkdir -p "$LOCKDIR"
if [ "$UPDATE" = 1 ] || [ ! -f "$LOCKDIR/package-lock.json" ]; then
  # the old lock keeps every package that is still pinned at its version: only what changed re-resolves
  [ -f "$LOCKDIR/package-lock.json" ] && cp "$LOCKDIR/package-lock.json" .
  npm install --no-audit --no-fund --ignore-scripts=false --loglevel=error
  cp package.json package-lock.json "$LOCKDIR/"
else
  cp "$LOCKDIR/package-lock.json" .
  cmp -s package.json "$LOCKDIR/package.json" || {
    echo "pins in scripts/vendor.sh differ from static/vendor/npm/package.json: run with --update" >&2
    exit 1
  }
  npm ci --no-audit --no-fund --loglevel=error
fi

# Entry points: only what the page imports.
cat > codemirror.entry.js <<'EOF'
export { EditorView, basicSetup } from "codemirror";
export { EditorState, Compartment, StateEffect, StateField, RangeSet } from "@codemirror/state";
export { keymap, Decoration, ViewPlugin, GutterMarker, gutter } from "@codemirror/view";
export { python } from "@codemirror/lang-python";
export { oneDark } from "@codemirror/theme-one-dark";
export { setDiagnostics, lintGutter } from "@codemirror/lint";
export { indentWithTab } from "@codemirror/commands";
EOF
cat > d3.entry.js <<'EOF'
export { select, selectAll, pointer } from "d3-selection";
export { zoom, zoomIdentity, zoomTransform } from "d3-zoom";
export { interpolateRgb, interpolateNumber } from "d3-interpolate";
EOF
cat > katex.entry.js <<'EOF'
export { default } from "katex";
EOF
cat > uplot.entry.js <<'EOF'
export { default } from "uplot";
EOF
cat > qrcode.entry.js <<'EOF'
export { default } from "qrcode-generator";
EOF
cat > gifenc.entry.js <<'EOF'
export { GIFEncoder, quantize, applyPalette } from "gifenc";
EOF

rm -rf "$OUT/codemirror.js" "$OUT/qrcode.js" "$OUT/gifenc.js" "$OUT/d3.js" "$OUT/katex" "$OUT/uplot" "$OUT/licenses"
mkdir -p "$OUT/katex/fonts" "$OUT/uplot" "$OUT/licenses"

ESB=./node_modules/.bin/esbuild
build() { # entry outfile
  "$ESB" "$1" --bundle --format=esm --minify --target=es2020 --legal-comments=eof \
    --log-level=warning --metafile="$1.meta.json" --outfile="$2"
}
build codemirror.entry.js "$OUT/codemirror.js"
build d3.entry.js "$OUT/d3.js"
build katex.entry.js "$OUT/katex/katex.js"
build uplot.entry.js "$OUT/uplot/uplot.js"
build qrcode.entry.js "$OUT/qrcode.js"
build gifenc.entry.js "$OUT/gifenc.js"

# KaTeX CSS: keep only the woff2 sources (every browser we serve supports woff2; no 404s for woff/ttf).
sed -E 's/,url\(fonts\/[A-Za-z0-9_-]+\.(woff|ttf)\) format\("(woff|truetype)"\)//g' \
  node_modules/katex/dist/katex.min.css > "$OUT/katex/katex.min.css"
cp node_modules/katex/dist/fonts/*.woff2 "$OUT/katex/fonts/"
cp node_modules/uplot/dist/uPlot.min.css "$OUT/uplot/uPlot.min.css"

# Licences + manifest, from the esbuild metafiles (every package that ended up in a bundle).
node - "$OUT" <<'EOF'
const fs = require("fs"), path = require("path");
const out = process.argv[2];
const bundles = {
  "codemirror.js": "codemirror.entry.js.meta.json",
  "d3.js": "d3.entry.js.meta.json",
  "katex/katex.js": "katex.entry.js.meta.json",
  "uplot/uplot.js": "uplot.entry.js.meta.json",
  "qrcode.js": "qrcode.entry.js.meta.json",
  "gifenc.js": "gifenc.entry.js.meta.json",
};
const pkgInfo = (name) => {
  const dir = path.join("node_modules", name);
  const pj = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
  const lic = fs.readdirSync(dir).find((f) => /^(licen[cs]e|copying)(\.(md|txt))?$/i.test(f));
  let licenseText = lic && fs.readFileSync(path.join(dir, lic), "utf8");
  if (!licenseText) {  // no licence file (qrcode-generator): the licence header of its entry file
    const entry = fs.readFileSync(path.join(dir, pj.module || pj.main), "utf8").split("\n").slice(0, 20);
    const header = entry.filter((l) => l.startsWith("//")).join("\n");
    if (!/Copyright/.test(header) || !header.includes(pj.license)) throw new Error(`no licence file in ${name}`);
    licenseText = header + "\n";
  }
  return { name, version: pj.version, license: pj.license, licenseText };
};
const pkgOf = (input) => {
  const m = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  return m && m[1];
};
const files = [];
const all = new Map();
for (const [file, meta] of Object.entries(bundles)) {
  const m = JSON.parse(fs.readFileSync(meta, "utf8"));
  const pkgs = [...new Set(Object.keys(m.inputs).map(pkgOf).filter(Boolean))].sort();
  for (const p of pkgs) all.set(p, pkgInfo(p));
  files.push({ file, pkgs });
}
files.push({ file: "katex/katex.min.css", pkgs: ["katex"] });
files.push({ file: "katex/fonts/*.woff2 (" + fs.readdirSync(path.join(out, "katex/fonts")).length + " files)", pkgs: ["katex"] });
files.push({ file: "uplot/uPlot.min.css", pkgs: ["uplot"] });
for (const p of ["katex", "uplot"]) all.set(p, pkgInfo(p));
const licName = (p) => p.replace("@", "").replace("/", "__") + ".txt";
for (const info of all.values()) fs.writeFileSync(path.join(out, "licenses", licName(info.name)), info.licenseText);
const size = (f) => (f.includes("*") ? "" : String(fs.statSync(path.join(out, f)).size));
let md = "# Vendored front-end libraries\n\n";
md += "Generated by `scripts/vendor.sh` from the npm registry; do not edit by hand.\n";
md += "Exact versions of every transitive package are pinned in `npm/package-lock.json`.\n\n";
md += "## Files\n\n| file | bytes | packages (version, licence) |\n|---|---|---|\n";
for (const { file, pkgs } of files) {
  md += `| \`${file}\` | ${size(file)} | ${pkgs.map((p) => `${p}@${all.get(p).version} (${all.get(p).license})`).join(", ")} |\n`;
}
md += "\n## Packages\n\n| package | version | licence | licence text |\n|---|---|---|---|\n";
for (const info of [...all.values()].sort((a, b) => a.name.localeCompare(b.name))) {
  md += `| ${info.name} | ${info.version} | ${info.license} | \`licenses/${licName(info.name)}\` |\n`;
}
md += "\nBuild tool (not shipped): esbuild@" + JSON.parse(fs.readFileSync("node_modules/esbuild/package.json", "utf8")).version + " (MIT).\n";
fs.writeFileSync(path.join(out, "MANIFEST.md"), md);
EOF

echo "vendor: rebuilt $(cd "$OUT" && find . -type f -not -path './npm/*' | wc -l) files in static/vendor"
