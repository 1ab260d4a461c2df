// Vendored libraries loaded on first use: their stylesheet, then their module's default export.
export function onFirstUse(cssHref, importModule) {
  let promise = null;
  return () => {
    if (!promise) {
      promise = importModule().then((m) => m.default);
      if (document.querySelector(`style[data-href="${cssHref}"]`)) return promise;  // inlined (an offline copy)
      const link = document.createElement("link");
      link.rel = "stylesheet";
      link.href = cssHref;
      document.head.appendChild(link);
    }
    return promise;
  };
}
