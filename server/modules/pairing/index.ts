export { PairingRequest, PairingStatus } from './pairing-request.entity';
export {
  PairingService,
  type PairingNotifier,
  type PairingOptions,
  type PairingOutcome,
  type PairingRequestInput,
  type PairingApproval,
} from './pairing.service';
export { PAIRING_CODE_ALPHABET, PAIRING_CODE_LENGTH, generatePairingCode, normalizePairingCode, looksLikePairingCode } from './pairing-code';
export { registerPairingCommands, type PairingCommandDeps } from './pairing-commands';
