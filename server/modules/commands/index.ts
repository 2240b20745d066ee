export { SlashCommandService, type CommandExtension, type CommandResult, type CommandTools, type CommandApprovals, type SlashCommandDeps, type MenuCommand } from './slash-command.service';
