import 'reflect-metadata';
import { graphql, printSchema, type GraphQLSchema } from 'graphql';
import { buildSchema, type ContainerType } from 'type-graphql';
import { z } from 'zod';
import { AppError } from '../../../server/common/errors';
import { TrustLevel } from '../../../server/common/trust';
import { authChecker } from '../../../server/graphql/auth-checker';
import { createLoaders } from '../../../server/graphql/context';
import { ToolResolver } from '../../../server/graphql/resolvers/tool.resolver';
import { createBuiltinTools, defineTool, ToolApprovalStatus } from '../../../server/modules/tools';
import { ToolsFixture } from './tools-fixture';

/** The resolver on its own schema (the lead wires it into build-schema.ts). */
describe('ToolResolver', () => {
  let f: ToolsFixture;
  let schema: GraphQLSchema;

  beforeAll(async () => {
    f = await ToolsFixture.create({ config: { tools: { shell: { enabled: true, allow: ['echo'] } } } });
    f.register(
      ...createBuiltinTools({ tools: f.app.config.tools, users: f.app.services.users }),
      defineTool({ name: 'guarded', description: 'Needs approval.', schema: z.object({}), minTrust: TrustLevel.TRUSTED, requiresApproval: true, run: async () => 'ran' }),
    );
    const resolver = new ToolResolver(f.registry, f.approvals);
    schema = await buildSchema({
      resolvers: [ToolResolver],
      container: { get: () => resolver } as unknown as ContainerType,
      authChecker,
      authMode: 'error',
      validate: { forbidUnknownValues: false },
    });
  });
  afterAll(() => f.close());

  async function exec(level: TrustLevel, source: string, variableValues?: Record<string, unknown>) {
    const ctx = f.ctx(level);
    const result = await graphql({ schema, source, variableValues, contextValue: { ctx, loaders: createLoaders(ctx, f.app.services.users) } });
    const error = result.errors?.[0]?.originalError;
    return { data: result.data as Record<string, unknown> | null | undefined, code: error instanceof AppError ? error.code : undefined, errors: result.errors };
  }

  it('exposes tools, toolApprovals and decideToolApproval with the ToolApprovalDecision enum', () => {
    const sig = (type: 'Query' | 'Mutation', name: string) => {
      const field = (type === 'Query' ? schema.getQueryType() : schema.getMutationType())!.getFields()[name]!;
      return `${name}(${field.args.map((a) => `${a.name}: ${String(a.type)}`).join(', ')}): ${String(field.type)}`;
    };
    expect(sig('Query', 'tools')).toBe('tools(channel: String): [ToolInfo!]!');
    expect(sig('Query', 'toolApprovals')).toBe('toolApprovals(status: ToolApprovalStatus): [ToolApproval!]!');
    expect(sig('Mutation', 'decideToolApproval')).toBe('decideToolApproval(decision: ToolApprovalDecision!, id: ID!): ToolApproval!');
    expect(printSchema(schema)).toMatch(/enum ToolApprovalDecision \{\s+ALLOW_ONCE\s+ALLOW_ALWAYS\s+DENY\s+\}/);
  });

  it('tools: every tool with floor, approval flag and what the caller may use on a channel', async () => {
    await f.app.services.plugins.set(f.ctx(TrustLevel.ADMIN), 'http_request', 'whatsapp', false);
    const q = 'query($c: String) { tools(channel: $c) { name minTrust requiresApproval enabled usable } }';
    const member = await exec(TrustLevel.MEMBER, q, { c: 'whatsapp' });
    expect(member.data!.tools).toEqual([
      { name: 'current_time', minTrust: 'MEMBER', requiresApproval: false, enabled: true, usable: true },
      { name: 'http_request', minTrust: 'TRUSTED', requiresApproval: false, enabled: false, usable: false },
      { name: 'shell', minTrust: 'OWNER', requiresApproval: true, enabled: true, usable: false },
      { name: 'guarded', minTrust: 'TRUSTED', requiresApproval: true, enabled: true, usable: false },
    ]);
    const owner = await exec(TrustLevel.OWNER, q, { c: 'telegram' });
    expect((owner.data!.tools as Array<{ usable: boolean }>).every((t) => t.usable)).toBe(true);
    expect((await exec(TrustLevel.GUEST, q)).code).toBe('FORBIDDEN');
  });

  it('toolApprovals and decideToolApproval: ADMIN+, OWNER for OWNER-level tools, CONFLICT on a second decision', async () => {
    const shellReq = (await f.approvals.request(f.ctx(TrustLevel.OWNER), { sessionId: 's', tool: 'shell', args: { argv: ['echo'] } })).approval;
    const guardedReq = (await f.approvals.request(f.ctx(TrustLevel.TRUSTED), { sessionId: 's', tool: 'guarded', args: {} })).approval;

    const list = 'query($s: ToolApprovalStatus) { toolApprovals(status: $s) { id tool status args } }';
    const pending = await exec(TrustLevel.ADMIN, list, { s: 'PENDING' });
    expect((pending.data!.toolApprovals as Array<{ id: string }>).map((a) => a.id).sort()).toEqual([shellReq.id, guardedReq.id].sort());
    expect((await exec(TrustLevel.TRUSTED, list)).code).toBe('FORBIDDEN');

    const decide = 'mutation($id: ID!, $d: ToolApprovalDecision!) { decideToolApproval(id: $id, decision: $d) { id status decidedBy } }';
    expect((await exec(TrustLevel.ADMIN, decide, { id: shellReq.id, d: 'ALLOW_ONCE' })).code).toBe('FORBIDDEN');
    const byOwner = await exec(TrustLevel.OWNER, decide, { id: shellReq.id, d: 'DENY' });
    expect(byOwner.data!.decideToolApproval).toEqual({ id: shellReq.id, status: ToolApprovalStatus.DENIED, decidedBy: f.user(TrustLevel.OWNER).id });
    const byAdmin = await exec(TrustLevel.ADMIN, decide, { id: guardedReq.id, d: 'ALLOW_ALWAYS' });
    expect(byAdmin.data!.decideToolApproval).toMatchObject({ status: ToolApprovalStatus.ALLOWED_ALWAYS });
    expect((await exec(TrustLevel.OWNER, decide, { id: guardedReq.id, d: 'DENY' })).code).toBe('CONFLICT');
    expect((await exec(TrustLevel.TRUSTED, decide, { id: guardedReq.id, d: 'DENY' })).code).toBe('FORBIDDEN');
  });
});
