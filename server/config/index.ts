export { appConfigSchema, type AppConfig, type ProviderConfig, type RouteConfig, type VoiceConfig } from './app-config.schema';
export { loadConfig, defaultConfig, configFilePath, formatConfigIssues } from './load-config';
export { renderConfigExample, CONFIG_EXAMPLE_FILE } from './config-example';
