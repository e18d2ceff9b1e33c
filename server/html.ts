/** Escaping for the server-rendered pages (GraphiQL, live status). */

/** Text safe inside HTML text and attribute values. */
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** JSON safe inside <script>: no `</script>` or `<!--` can close or confuse the element. */
export const scriptJson = (value: unknown): string =>
  JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
