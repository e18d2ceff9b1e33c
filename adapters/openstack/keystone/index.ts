/** Keystone as the rest of the gateway sees it: the credential type the configuration names. */
export type { ServiceAuth } from './requests';
export type { Session } from './results';
export { Keystone, type KeystoneOptions } from './client';
