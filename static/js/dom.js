// Element lookup and the status line: the DOM helpers every part of the page uses.
export const $ = (id) => document.getElementById(id);

export function setStatus(text, isError = false) {
  const s = $("status");
  s.textContent = text;
  s.classList.toggle("error", isError);
}
