import type { DataSource, EntityMetadata } from 'typeorm';

/**
 * What hand-built statements on an entity's table need from TypeORM: whether the table is a plain one
 * (a regular table without embedded, soft-deleted, inherited or tree columns, in a data source without
 * subscribers — anything else keeps going through TypeORM), and its escaped names.
 */
export function isPlainTable(meta: EntityMetadata, ds: DataSource): boolean {
  return (
    meta.tableType === 'regular' &&
    !meta.embeddeds.length &&
    !meta.deleteDateColumn &&
    !meta.discriminatorColumn &&
    !meta.inheritancePattern &&
    !meta.treeType &&
    !ds.subscribers.length
  );
}

/** The entity's table, escaped for the data source's driver (schema-qualified where it has a schema). */
export function escapedTable(meta: EntityMetadata, ds: DataSource): string {
  return meta.tablePath
    .split('.')
    .map((part) => ds.driver.escape(part))
    .join('.');
}

/** A placeholder maker that appends each value to `params` (`?` on SQLite, `$n` on PostgreSQL). */
export function parameterMaker(ds: DataSource, params: unknown[], prefix = 'p'): (value: unknown) => string {
  return (value) => {
    params.push(value);
    return ds.driver.createParameter(`${prefix}${params.length}`, params.length - 1);
  };
}
