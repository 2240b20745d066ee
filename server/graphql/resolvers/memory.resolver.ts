import { Arg, Args, ArgsType, Authorized, Ctx as GqlCtx, Field, Float, ID, InputType, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { Length, Max, MaxLength, Min } from '../validators';
import { TrustLevel } from '../../common/trust';
import { toPageArgs } from '../../common/pagination';
import { MAX_MEMORY_CHARS, MAX_SEARCH_LIMIT, Memory, MemoryScope, MemoryService, MemoryType } from '../../modules/memory';
import { KnowledgeSearchService, KnowledgeSource, type KnowledgeHit } from '../../modules/documents';
import { Connection, ConnectionArgs, toConnection, type ConnectionShape } from '../connection';
import type { GraphQLContext } from '../context';

const MemoryConnection = Connection(Memory);

@InputType()
class MemoryFilter {
  @Field(() => MemoryType, { nullable: true })
  type?: MemoryType | null;

  @Field(() => MemoryScope, { nullable: true })
  scope?: MemoryScope | null;

  @Field(() => ID, { nullable: true })
  userId?: string | null;

  @Field(() => String, { nullable: true })
  groupId?: string | null;
}

@InputType()
class CreateMemoryInput {
  @Field()
  @Length(1, MAX_MEMORY_CHARS)
  content!: string;

  @Field(() => MemoryType, { nullable: true, description: 'Defaults to fact.' })
  type?: MemoryType | null;

  @Field(() => MemoryScope, { nullable: true, description: 'Defaults to user; group and global need ADMIN.' })
  scope?: MemoryScope | null;

  @Field(() => ID, { nullable: true, description: 'Owner of a user-scoped memory; defaults to you.' })
  userId?: string | null;

  @Field(() => String, { nullable: true })
  @MaxLength(300)
  groupId?: string | null;

  @Field(() => Float, { nullable: true })
  @Min(0)
  @Max(1)
  importance?: number | null;
}

@InputType()
class UpdateMemoryInput {
  @Field(() => String, { nullable: true })
  @Length(1, MAX_MEMORY_CHARS)
  content?: string | null;

  @Field(() => MemoryType, { nullable: true })
  type?: MemoryType | null;

  @Field(() => Float, { nullable: true })
  @Min(0)
  @Max(1)
  importance?: number | null;
}

@ObjectType({ description: 'A passage of a document found by searchMemories.' })
class DocumentPassage {
  @Field(() => ID)
  documentId!: string;

  @Field()
  documentName!: string;

  @Field(() => Int, { nullable: true, description: 'Page it starts on (PDF); null for formats without pages.' })
  page!: number | null;

  @Field(() => String, { nullable: true })
  heading!: string | null;

  @Field()
  content!: string;

  @Field({ description: 'How to cite it: "name, p. 3".' })
  citation!: string;
}

@ObjectType({ description: 'A memory or a document passage found by searchMemories, with its relevance (0..1).' })
class MemorySearchHit {
  @Field(() => KnowledgeSource, { description: 'MEMORY (then memory is set) or DOCUMENT (then document is set).' })
  source!: KnowledgeSource;

  @Field(() => Memory, { nullable: true })
  memory!: Memory | null;

  @Field(() => DocumentPassage, { nullable: true })
  document!: DocumentPassage | null;

  @Field(() => Float, { description: 'Hybrid relevance: keyword and vector, weighted by importance and recency.' })
  score!: number;

  @Field(() => Float, { description: "Share of the query's words the hit contains (IDF-weighted)." })
  keywordScore!: number;

  @Field(() => Float, { nullable: true, description: 'Cosine similarity to the query; null when search ran keyword-only.' })
  vectorScore!: number | null;
}

function toSearchHit(hit: KnowledgeHit): MemorySearchHit {
  const c = hit.chunk;
  return {
    source: hit.source,
    memory: hit.memory,
    document: c ? { documentId: c.documentId, documentName: c.documentName, page: c.page, heading: c.heading, content: c.content, citation: c.citation } : null,
    score: hit.score,
    keywordScore: hit.keywordScore,
    vectorScore: hit.vectorScore,
  };
}

@ArgsType()
class SearchMemoriesArgs {
  @Field()
  @Length(1, 1000)
  query!: string;

  @Field(() => Int, { nullable: true, defaultValue: 10 })
  @Min(1)
  @Max(MAX_SEARCH_LIMIT)
  limit?: number | null;
}

@Resolver(() => Memory)
export class MemoryResolver {
  constructor(
    private readonly memoryService: MemoryService,
    private readonly maxPageSize: number,
    private readonly searchService: KnowledgeSearchService,
  ) {}

  @Authorized(TrustLevel.MEMBER)
  @Query(() => [MemorySearchHit], {
    description: 'Hybrid search (keyword + vector) of own and global memories and document passages; everyone\'s for ADMIN and above. Best first.',
  })
  async searchMemories(@Args() { query, limit }: SearchMemoriesArgs, @GqlCtx() { ctx }: GraphQLContext): Promise<MemorySearchHit[]> {
    return (await this.searchService.search(ctx, query, limit ?? 10)).map(toSearchHit);
  }

  @Authorized(TrustLevel.MEMBER)
  @Query(() => MemoryConnection, { description: 'Own and global memories; everyone\'s for ADMIN and above.' })
  async memories(
    @Args() { first, after }: ConnectionArgs,
    @Arg('filter', () => MemoryFilter, { nullable: true }) filter: MemoryFilter | null,
    @GqlCtx() { ctx }: GraphQLContext,
  ): Promise<ConnectionShape<Memory>> {
    return toConnection(await this.memoryService.findMany(ctx, filter ?? {}, toPageArgs(first, after, this.maxPageSize)));
  }

  @Authorized(TrustLevel.MEMBER)
  @Mutation(() => Memory)
  createMemory(@Arg('input') input: CreateMemoryInput, @GqlCtx() { ctx }: GraphQLContext): Promise<Memory> {
    return this.memoryService.create(ctx, input);
  }

  @Authorized(TrustLevel.MEMBER)
  @Mutation(() => Memory)
  updateMemory(
    @Arg('id', () => ID) id: string,
    @Arg('input') input: UpdateMemoryInput,
    @GqlCtx() { ctx }: GraphQLContext,
  ): Promise<Memory> {
    return this.memoryService.update(ctx, id, input);
  }

  @Authorized(TrustLevel.MEMBER)
  @Mutation(() => Boolean)
  deleteMemory(@Arg('id', () => ID) id: string, @GqlCtx() { ctx }: GraphQLContext): Promise<boolean> {
    return this.memoryService.delete(ctx, id);
  }
}
