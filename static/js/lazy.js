// Vendored libraries loaded on first use: their stylesheet, then their module's default export.
export function onFirstUse(cssHref, importModule) {
  let promise = null;
  return () => {
    if (!promise) {
      const link = document.createElement("link");
      link.rel = "stylesheet";
      link.href = cssHref;
      document.head.appendChild(link);
      promise = importModule().then((m) => m.default);
    }
    return promise;
  };
}
