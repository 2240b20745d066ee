/** Writes schema/schema.graphql from the code (npm run schema). */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderSchema } from '../server/graphql/render-schema';

renderSchema()
  .then((sdl) => {
    const file = path.join(__dirname, '..', '..', 'schema', 'schema.graphql');
    writeFileSync(file, sdl);
    console.log(`wrote ${file}`);
  })
  .catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
