export { User } from './user.entity';
export { Identity } from './identity.entity';
export { UserService, CHANNELS, type ChannelName, type CreateUserInput } from './user.service';
export { access } from '../../common/access';
