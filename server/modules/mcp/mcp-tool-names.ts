/** Function names models accept: lowercase letters, digits and _, at most 64 (the registry's rule). */
const MAX = 64;

/** `<server>__<tool>` in the model's name rules: lowercase, anything else becomes `_`, cut to 64. */
export function mcpToolName(server: string, tool: string): string {
  const clean = (s: string) => s.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  let name = `${clean(server)}__${clean(tool)}`;
  if (!/^[a-z]/.test(name)) name = `m${name}`;
  return name.slice(0, MAX);
}

/** Makes `name` unique among `taken` by a numeric suffix (`_2`, `_3`, …) within 64 characters. */
export function uniqueName(name: string, taken: Set<string>): string {
  if (!taken.has(name)) return name;
  for (let i = 2; ; i++) {
    const suffix = `_${i}`;
    const candidate = `${name.slice(0, MAX - suffix.length)}${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}

/** Whether `name` matches a pattern of an allow/deny list (`*` matches any text). */
export function matchesPattern(name: string, pattern: string): boolean {
  const re = new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return re.test(name);
}
