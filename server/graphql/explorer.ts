/**
 * A small in-browser GraphQL explorer served at GET /graphql in development. It is one self-contained
 * page (no CDN, no external scripts), so it works on machines without internet access.
 */
export const EXPLORER_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Muninn GraphQL explorer</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{margin:0;font:14px system-ui,sans-serif;display:grid;grid-template-columns:280px 1fr 1fr;grid-template-rows:auto 1fr;height:100vh;color:#1d2330}
header{grid-column:1/4;display:flex;gap:8px;align-items:center;padding:8px 12px;background:#1d2330;color:#fff}
header input{flex:1;max-width:460px;font:inherit;padding:4px 6px}
button{font:inherit;padding:4px 14px;cursor:pointer}
#docs{overflow:auto;padding:8px 12px;border-right:1px solid #ddd;background:#fafafa}
#docs h3{margin:12px 0 4px;font-size:13px;text-transform:uppercase;color:#667}
#docs div{font-family:ui-monospace,monospace;font-size:12px;padding:2px 0;cursor:pointer}
#docs div:hover{color:#0a58ca}
#edit{display:grid;grid-template-rows:2fr 1fr;border-right:1px solid #ddd}
textarea{font:13px ui-monospace,monospace;border:0;padding:10px;resize:none;outline:none}
#vars{border-top:1px solid #ddd}
pre{margin:0;padding:10px;overflow:auto;font:13px ui-monospace,monospace;white-space:pre-wrap}
</style></head>
<body>
<header><strong>Muninn</strong>
<input id="token" type="password" placeholder="API token (Bearer), e.g. from data/owner.token" autocomplete="off">
<button id="run" title="Ctrl+Enter">Run</button><span id="status"></span></header>
<nav id="docs">Loading schema…</nav>
<section id="edit"><textarea id="query" spellcheck="false">{ me { id displayName trust } }</textarea>
<textarea id="vars" spellcheck="false" placeholder="Variables (JSON)">{}</textarea></section>
<pre id="result"></pre>
<script>
const $ = (id) => document.getElementById(id);
$('token').value = localStorage.getItem('muninn.token') || '';
$('token').addEventListener('change', () => { localStorage.setItem('muninn.token', $('token').value.trim()); loadDocs(); });
async function gql(query, variables) {
  const headers = { 'content-type': 'application/json' };
  const token = $('token').value.trim();
  if (token) headers.authorization = 'Bearer ' + token;
  const res = await fetch(location.pathname, { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
  return { status: res.status, body: await res.json().catch(() => ({ error: 'non-JSON answer' })) };
}
function typeName(t) { return t.kind === 'NON_NULL' ? typeName(t.ofType) + '!' : t.kind === 'LIST' ? '[' + typeName(t.ofType) + ']' : t.name; }
async function loadDocs() {
  const q = '{ __schema { queryType { name } mutationType { name } subscriptionType { name } types { name fields { name args { name type { ...T } } type { ...T } } } } } fragment T on __Type { kind name ofType { kind name ofType { kind name ofType { kind name } } } }';
  const { body } = await gql(q, {});
  const docs = $('docs'); docs.textContent = '';
  if (!body.data) { docs.textContent = 'Schema unavailable: ' + JSON.stringify(body.errors || body); return; }
  const s = body.data.__schema;
  for (const root of [s.queryType, s.mutationType, s.subscriptionType].filter(Boolean)) {
    const type = s.types.find((t) => t.name === root.name);
    const h = document.createElement('h3'); h.textContent = root.name; docs.appendChild(h);
    for (const f of type.fields) {
      const d = document.createElement('div');
      const args = f.args.map((a) => a.name + ': ' + typeName(a.type)).join(', ');
      d.textContent = f.name + (args ? '(' + args + ')' : '') + ': ' + typeName(f.type);
      d.onclick = () => { $('query').value = (root.name === 'Query' ? '' : root.name.toLowerCase() + ' ') + '{\\n  ' + f.name + (args ? '(' + f.args.map((a) => a.name + ': ').join(', ') + ')' : '') + '\\n}'; };
      docs.appendChild(d);
    }
  }
}
async function run() {
  let variables = {};
  try { variables = JSON.parse($('vars').value || '{}'); } catch (e) { $('result').textContent = 'Variables are not valid JSON: ' + e.message; return; }
  $('status').textContent = '…';
  const t0 = performance.now();
  const { status, body } = await gql($('query').value, variables);
  $('status').textContent = status + ' · ' + Math.round(performance.now() - t0) + ' ms';
  $('result').textContent = JSON.stringify(body, null, 2);
}
$('run').onclick = run;
document.addEventListener('keydown', (e) => { if ((e.ctrlKey || e.metaKey) && e.key === 'Enter') run(); });
loadDocs();
</script></body></html>`;
