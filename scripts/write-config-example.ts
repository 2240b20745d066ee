/** Writes muninn.example.json from the config defaults (npm run config:example). */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { CONFIG_EXAMPLE_FILE, renderConfigExample } from '../server/config/config-example';

const file = path.join(__dirname, '..', '..', CONFIG_EXAMPLE_FILE);
writeFileSync(file, renderConfigExample());
console.log(`wrote ${file}`);
