import { LessThan, MoreThan, type FindOptionsWhere, type ObjectLiteral, type Repository } from 'typeorm';
import type { Page, PageArgs } from '../common/pagination';
import { countPlain, isPlainWhere, selectPlain, type PlainWhere, type SelectOptions } from './plain-select';

/** What a caller that never shows the total gets as `totalCount`: not a count, and no GraphQL Int either. */
export const NOT_COUNTED = Number.NaN;

/**
 * One page of rows ordered by id (ids are time-ordered), newest first for DESC. `where` may be a list of
 * alternatives (OR); the cursor condition is added to each. `read` may name a many-to-one relation to
 * load with each row and limit the properties read (see selectPlain); TypeORM's path reads them all.
 * `read.count: false` skips the count (totalCount is then NOT_COUNTED), for a query that does not select it.
 */
export async function findPage<E extends { id: string }>(
  repo: Repository<E>,
  where: FindOptionsWhere<E> | FindOptionsWhere<E>[],
  page: PageArgs,
  direction: 'ASC' | 'DESC' = 'DESC',
  read: Pick<SelectOptions, 'join' | 'columns' | 'joinColumns'> & { count?: boolean } = {},
): Promise<Page<E>> {
  const { count = true, ...select } = read;
  const join = select.join;
  const alternatives = Array.isArray(where) ? where : [where];
  if (alternatives.every(isPlainWhere)) {
    const plain = alternatives as PlainWhere[];
    const [rows, totalCount] = await Promise.all([
      selectPlain(repo, plain, {
        idAfter: page.afterId ? { id: page.afterId, direction } : undefined,
        order: direction,
        limit: page.first + 1,
        ...select,
      }),
      count ? countPlain(repo as unknown as Repository<ObjectLiteral>, plain) : NOT_COUNTED,
    ]);
    if (rows && totalCount !== null)
      return { nodes: rows.slice(0, page.first), hasNextPage: rows.length > page.first, totalCount };
  }
  const cursorWhere = page.afterId
    ? alternatives.map((w) => ({
        ...w,
        id: direction === 'DESC' ? LessThan(page.afterId!) : MoreThan(page.afterId!),
      }))
    : alternatives;
  const [rows, totalCount] = await Promise.all([
    repo.find({
      where: cursorWhere as FindOptionsWhere<E>[],
      order: { id: direction } as never,
      take: page.first + 1,
      ...(join ? { relations: { [join]: true } as never } : {}),
    }),
    count ? repo.count({ where: alternatives }) : NOT_COUNTED,
  ]);
  return { nodes: rows.slice(0, page.first), hasNextPage: rows.length > page.first, totalCount };
}
