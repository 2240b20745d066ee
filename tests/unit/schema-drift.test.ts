/**
 * Drift checks (issue 2 acceptance 5): the committed schema/schema.graphql is what the code emits, and the
 * committed typed documents are what graphql-codegen makes of it. Fix a failure with `npm run schema` and
 * `npm run codegen`.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { buildSchema, parse, validate } from 'graphql';
import { renderSchema } from '../../server/graphql/render-schema';

const root = path.resolve(__dirname, '..', '..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

it('schema/schema.graphql equals the schema emitted from the code (run `npm run schema`)', async () => {
  const emitted = await renderSchema();
  expect(emitted).toBe(read('schema/schema.graphql'));
});

it('the committed schema names the operations of the foundation', () => {
  const schema = buildSchema(read('schema/schema.graphql'));
  const query = Object.keys(schema.getQueryType()!.getFields());
  const mutation = Object.keys(schema.getMutationType()!.getFields());
  expect(query).toEqual(
    expect.arrayContaining([
      'me',
      'users',
      'user',
      'sessions',
      'session',
      'messages',
      'memories',
      'pluginSettings',
      'auditLog',
    ]),
  );
  expect(mutation).toEqual(
    expect.arrayContaining([
      'createUser',
      'setUserTrust',
      'linkIdentity',
      'createApiToken',
      'revokeApiToken',
      'createMemory',
      'updateMemory',
      'deleteMemory',
      'setPluginSetting',
    ]),
  );
});

/**
 * Runs graphql-codegen's `generate(config, false)` (files returned, nothing written) with the config of
 * codegen.yml. It runs in a plain Node child process: the CLI loads yargs, an ES module that jest's module
 * loader cannot require on Node 20.
 */
function codegenInMemory(): Promise<Array<{ filename: string; content: string }>> {
  const script = `
    const { generate, loadCodegenConfig } = require('@graphql-codegen/cli');
    (async () => {
      const { config } = await loadCodegenConfig({ configFilePath: 'codegen.yml' });
      const files = await generate({ ...config, cwd: process.cwd(), silent: true, verbose: false }, false);
      process.stdout.write(JSON.stringify({ outputs: Object.keys(config.generates), files }));
    })().catch((err) => { console.error(err); process.exit(1); });`;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['-e', script],
      { cwd: root, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`graphql-codegen failed: ${stderr || err.message}`));
        const { outputs, files } = JSON.parse(stdout) as {
          outputs: string[];
          files: Array<{ filename: string; content: string }>;
        };
        expect(files.map((f) => f.filename).sort()).toEqual([...outputs].sort());
        resolve(files);
      },
    );
  });
}

it('the tests\' and the admin UI\'s typed documents equal a fresh graphql-codegen run (run `npm run codegen`)', async () => {
  const files = await codegenInMemory();
  expect(files.map((f) => f.filename)).toEqual(expect.arrayContaining(['tests/support/graphql/generated.ts', 'admin-ui/src/gql/graphql.ts']));
  for (const file of files) expect({ file: file.filename, same: file.content === read(file.filename) }).toEqual({ file: file.filename, same: true });
}, 60_000);

function graphqlFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.graphql'))
    .map((f) => path.join(dir, f));
}

it('every test and admin UI document is valid against the committed schema', () => {
  const schema = buildSchema(read('schema/schema.graphql'));
  const files = [...graphqlFiles('tests/support/graphql/documents'), ...graphqlFiles('admin-ui/src')];
  expect(files.some((f) => f.startsWith('admin-ui'))).toBe(true);
  for (const file of files) {
    expect({ file, errors: validate(schema, parse(read(file))).map((e) => e.message) }).toEqual({ file, errors: [] });
  }
});
