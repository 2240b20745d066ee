import { defaultConfig } from './load-config';

/** File name of the example configuration at the repository root. */
export const CONFIG_EXAMPLE_FILE = 'muninn.example.json';

/**
 * The text of muninn.example.json: every key with its default, in schema order. It is a valid config file
 * (copy it to muninn.json and change what you need); `npm run config:example` writes it and a test fails
 * when it drifts from the defaults.
 */
export function renderConfigExample(): string {
  return `${JSON.stringify(defaultConfig(), null, 2)}\n`;
}
