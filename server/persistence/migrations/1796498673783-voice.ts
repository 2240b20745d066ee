import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Voice notes (issue 26): `messages.voiceSeconds` (length of the voice note a user message is the
 * transcript of), `usage.audioSeconds` (seconds transcribed or spoken) and the `voice_preferences` table
 * (`/voice on|off|auto` per user, cascade on user delete). Columns are added in place on both databases
 * (SQLite's ADD COLUMN takes nullable and defaulted columns), so large message tables are not copied.
 */
export class Voice1796498673783 implements MigrationInterface {
  name = 'Voice1796498673783';

  async up(q: QueryRunner): Promise<void> {
    if (q.connection.options.type === 'postgres') {
      await q.query('ALTER TABLE "messages" ADD "voiceSeconds" integer');
      await q.query('ALTER TABLE "usage" ADD "audioSeconds" integer NOT NULL DEFAULT \'0\'');
      await q.query('CREATE TABLE "voice_preferences" ("id" character varying(36) NOT NULL, "createdAt" TIMESTAMP NOT NULL, "updatedAt" TIMESTAMP NOT NULL, "userId" character varying(36) NOT NULL, "reply" character varying(16) NOT NULL, CONSTRAINT "PK_b9221fba9e8a4181a616da1560b" PRIMARY KEY ("id"))');
      await q.query('CREATE UNIQUE INDEX "IDX_138e728f96856c8f64a1437037" ON "voice_preferences"  ("userId") ');
      await q.query('ALTER TABLE "voice_preferences" ADD CONSTRAINT "FK_138e728f96856c8f64a14370370" FOREIGN KEY ("userId") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION');
    } else {
      await q.query('ALTER TABLE "messages" ADD COLUMN "voiceSeconds" integer');
      await q.query('ALTER TABLE "usage" ADD COLUMN "audioSeconds" integer NOT NULL DEFAULT (0)');
      await q.query('CREATE TABLE "voice_preferences" ("id" varchar(36) PRIMARY KEY NOT NULL, "createdAt" datetime NOT NULL, "updatedAt" datetime NOT NULL, "userId" varchar(36) NOT NULL, "reply" varchar(16) NOT NULL, CONSTRAINT "FK_138e728f96856c8f64a14370370" FOREIGN KEY ("userId") REFERENCES "users" ("id") ON DELETE CASCADE ON UPDATE NO ACTION)');
      await q.query('CREATE UNIQUE INDEX "IDX_138e728f96856c8f64a1437037" ON "voice_preferences" ("userId") ');
    }
  }

  async down(q: QueryRunner): Promise<void> {
    if (q.connection.options.type === 'postgres') {
      await q.query('ALTER TABLE "voice_preferences" DROP CONSTRAINT "FK_138e728f96856c8f64a14370370"');
    }
    await q.query('DROP INDEX "IDX_138e728f96856c8f64a1437037"');
    await q.query('DROP TABLE "voice_preferences"');
    await q.query('ALTER TABLE "usage" DROP COLUMN "audioSeconds"');
    await q.query('ALTER TABLE "messages" DROP COLUMN "voiceSeconds"');
  }
}
