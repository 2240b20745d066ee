export { PluginSetting } from './plugin-setting.entity';
export { PluginSettingService } from './plugin-setting.service';
