export { SlashCommandService, type CommandExtension, type CommandResult, type CommandTools, type CommandApprovals, type SlashCommandDeps } from './slash-command.service';
