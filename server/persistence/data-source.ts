import 'reflect-metadata';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import * as sqliteVec from 'sqlite-vec';
import { DataSource, type DataSourceOptions } from 'typeorm';
import type { AppConfig } from '../config';
import { MIGRATIONS } from './migrations';
import { loadSqliteDriver } from './sqlite-driver';

export type DatabaseKind = 'sqlite' | 'postgres';

/** Which database the config selects. */
export function databaseKind(config: AppConfig): DatabaseKind {
  return config.database.url ? 'postgres' : 'sqlite';
}

/** Absolute path of the SQLite file. */
export function sqliteFilePath(config: AppConfig): string {
  return path.resolve(config.data_dir, config.database.sqlite_file);
}

/**
 * Builds the TypeORM data source: SQLite (WAL, busy timeout, foreign keys) in the data folder, or
 * PostgreSQL when `database.url` is set. Schema changes only ever come from migrations.
 */
/** `entities`: the data model (server/entities.ts), so persistence imports no module. */
export function createDataSource(config: AppConfig, entities: readonly Function[]): DataSource {
  const common = {
    entities: [...entities],
    migrations: [...MIGRATIONS],
    synchronize: false,
    migrationsRun: false,
    logging: false,
  };
  let options: DataSourceOptions;
  if (config.database.url) {
    options = { ...common, type: 'postgres', url: config.database.url, extra: { max: 10 } };
  } else {
    mkdirSync(config.data_dir, { recursive: true });
    options = {
      ...common,
      type: 'better-sqlite3',
      driver: loadSqliteDriver(),
      database: sqliteFilePath(config),
      enableWAL: true,
      // Migrations on SQLite recreate tables; foreign keys are checked again after each transaction.
      migrationsTransactionMode: 'each',
      prepareDatabase: (db: {
        pragma(sql: string): unknown;
        loadExtension(file: string, entrypoint?: string): void;
      }) => {
        db.pragma(`busy_timeout = ${config.database.busy_timeout_ms}`);
        db.pragma('foreign_keys = ON');
        db.pragma('synchronous = NORMAL');
        // Vector index of the memory store; without the extension memory search is keyword-only (the store says so).
        try {
          sqliteVec.load(db);
        } catch {
          /* reported once by SqlMemoryStore.init */
        }
      },
    };
  }
  return new DataSource(options);
}

/** Opens the data source and applies pending migrations; returns the names of the applied ones. */
export async function openDatabase(
  config: AppConfig,
  entities: readonly Function[],
): Promise<{ dataSource: DataSource; applied: string[] }> {
  const dataSource = createDataSource(config, entities);
  await dataSource.initialize();
  const applied = await dataSource.runMigrations({ transaction: 'each' });
  return { dataSource, applied: applied.map((m) => m.name) };
}

/** SQL statements that would bring the database in line with the entities; empty when migrations match. */
export async function pendingSchemaDiff(dataSource: DataSource): Promise<string[]> {
  const sql = await dataSource.driver.createSchemaBuilder().log();
  return sql.upQueries.map((q) => q.query);
}
