export { appConfigSchema, type AppConfig, type ProviderConfig, type RouteConfig, type VoiceConfig, type PriceConfig, type BudgetsConfig } from './app-config.schema';
export { loadConfig, defaultConfig, configFilePath, formatConfigIssues } from './load-config';
export { renderConfigExample, CONFIG_EXAMPLE_FILE } from './config-example';
export {
  mcpServerDefinitionSchema,
  approvalDefault,
  MCP_SERVER_NAME,
  type McpServerDefinition,
  type McpServerDefinitionInput,
  type McpConfig,
} from './mcp.schema';
