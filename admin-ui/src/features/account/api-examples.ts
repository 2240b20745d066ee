/** Copyable examples for the OpenAI-compatible API at `<origin>/v1` with an API token. */
export function apiExamples(origin: string, token: string | null): { sdk: string; curl: string } {
  const key = token ?? '$MUNINN_TOKEN';
  const sdk = [
    "import OpenAI from 'openai';",
    '',
    `const client = new OpenAI({ baseURL: '${origin}/v1', apiKey: ${token ? `'${token}'` : 'process.env.MUNINN_TOKEN'} });`,
    "const reply = await client.chat.completions.create({ model: 'muninn', messages: [{ role: 'user', content: 'Hello!' }] });",
    'console.log(reply.choices[0].message.content);',
  ].join('\n');
  const curl = [
    `curl -sS '${origin}/v1/chat/completions' \\`,
    `  -H "Authorization: Bearer ${key}" \\`,
    `  -H 'Content-Type: application/json' \\`,
    `  -d '{"model":"muninn","messages":[{"role":"user","content":"Hello!"}]}'`,
  ].join('\n');
  return { sdk, curl };
}
