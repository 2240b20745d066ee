import { Arg, Args, Authorized, Ctx as GqlCtx, Field, ID, InputType, Mutation, Query, Resolver } from 'type-graphql';
import { Length, MaxLength } from '../validators';
import { TrustLevel } from '../../common/trust';
import { toPageArgs } from '../../common/pagination';
import { MemoryScope } from '../../modules/memory';
import { Document, DocumentService, DocumentStatus } from '../../modules/documents';
import { Connection, ConnectionArgs, toConnection, type ConnectionShape } from '../connection';
import type { GraphQLContext } from '../context';

const DocumentConnection = Connection(Document);

@InputType()
class DocumentFilter {
  @Field(() => DocumentStatus, { nullable: true })
  status?: DocumentStatus | null;

  @Field(() => MemoryScope, { nullable: true })
  scope?: MemoryScope | null;

  @Field(() => ID, { nullable: true, description: 'ADMIN: one user\'s documents.' })
  userId?: string | null;

  @Field(() => String, { nullable: true })
  @MaxLength(300)
  groupId?: string | null;
}

@InputType({ description: 'A small document as base64 (the request body limit applies; use POST /uploads for large files).' })
class AddDocumentInput {
  @Field({ description: 'File name; its extension tells the format when mimeType is generic.' })
  @Length(1, 255)
  name!: string;

  @Field(() => String, { nullable: true, description: 'application/pdf, …wordprocessingml.document (DOCX), text/markdown, text/plain, text/html or text/csv.' })
  @MaxLength(200)
  mimeType?: string | null;

  @Field()
  contentBase64!: string;

  @Field(() => MemoryScope, { nullable: true, description: 'Defaults to user (private); group and global need ADMIN.' })
  scope?: MemoryScope | null;

  @Field(() => String, { nullable: true, description: 'Group chat key of a group document.' })
  @MaxLength(300)
  groupId?: string | null;
}

/** Documents: list, read, add (small files), delete, re-index. Large files go through POST /uploads. */
@Resolver(() => Document)
export class DocumentResolver {
  constructor(
    private readonly service: DocumentService,
    private readonly maxPageSize: number,
  ) {}

  @Authorized(TrustLevel.MEMBER)
  @Query(() => DocumentConnection, { description: 'Own and global documents, newest first; everyone\'s for ADMIN and above.' })
  async documents(
    @Args() { first, after }: ConnectionArgs,
    @Arg('filter', () => DocumentFilter, { nullable: true }) filter: DocumentFilter | null,
    @GqlCtx() { ctx }: GraphQLContext,
  ): Promise<ConnectionShape<Document>> {
    return toConnection(await this.service.findMany(ctx, filter ?? {}, toPageArgs(first, after, this.maxPageSize)));
  }

  @Authorized(TrustLevel.MEMBER)
  @Query(() => Document)
  document(@Arg('id', () => ID) id: string, @GqlCtx() { ctx }: GraphQLContext): Promise<Document> {
    return this.service.get(ctx, id);
  }

  @Authorized(TrustLevel.MEMBER)
  @Mutation(() => Document, { description: 'Adds a document and queues its ingestion (follow it with jobProgress(jobId) or document(id).status).' })
  addDocument(@Arg('input') input: AddDocumentInput, @GqlCtx() { ctx }: GraphQLContext): Promise<Document> {
    return this.service.addBase64(ctx, input);
  }

  @Authorized(TrustLevel.MEMBER)
  @Mutation(() => Boolean, { description: 'Deletes the document with its passages and their index entries (keyword and vector).' })
  deleteDocument(@Arg('id', () => ID) id: string, @GqlCtx() { ctx }: GraphQLContext): Promise<boolean> {
    return this.service.delete(ctx, id);
  }

  @Authorized(TrustLevel.MEMBER)
  @Mutation(() => Document, { description: 'Reads the stored file again (back to QUEUED).' })
  reindexDocument(@Arg('id', () => ID) id: string, @GqlCtx() { ctx }: GraphQLContext): Promise<Document> {
    return this.service.reindex(ctx, id);
  }
}
