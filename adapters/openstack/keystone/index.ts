/** Keystone as the rest of the gateway sees it: the credential type the configuration names, and a session. */
export type { ServiceAuth } from './requests';
export type { Session } from './results';
export { isAdminSession } from './results';
