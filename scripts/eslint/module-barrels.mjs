// ESLint rule: code outside a module folder (server/modules/<name>/) imports it only through its barrel
// (server/modules/<name>/index.ts), so each module's surface is what its index exports.
import path from 'node:path';

const MODULES = `${path.sep}server${path.sep}modules${path.sep}`;

function moduleOf(file) {
  const at = file.lastIndexOf(MODULES);
  if (at < 0) return null;
  const rest = file.slice(at + MODULES.length).split(path.sep);
  return rest.length > 1 ? { root: file.slice(0, at + MODULES.length) + rest[0], name: rest[0], inner: rest.slice(1).join('/') } : null;
}

export default {
  meta: {
    type: 'problem',
    docs: { description: 'Import other modules only through their index.ts' },
    messages: { deep: "Import '{{module}}' through its index (server/modules/{{module}}), not '{{source}}': add what you need to its index.ts." },
    schema: [],
  },
  create(context) {
    const file = context.filename;
    const own = moduleOf(file);
    function check(node) {
      const source = node.source?.value;
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const target = moduleOf(path.resolve(path.dirname(file), source));
      if (!target || (own && own.name === target.name)) return;
      if (target.inner === '' || target.inner === 'index' || target.inner === 'index.ts') return;
      context.report({ node: node.source, messageId: 'deep', data: { module: target.name, source } });
    }
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check };
  },
};
