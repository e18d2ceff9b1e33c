/**
 * Every backend kind the gateway knows, one line each: its registration (./registration.ts),
 * exported under its config kind. A kind that is only its adapter and SDL registers its module; one
 * with resolvers or a demo part registers them with it (`./<kind>.ts`). Every list of kinds the
 * gateway and its tests use is derived from here (./index.ts), so adding a backend is its folders
 * and one line here.
 */
export { memoryModule as memory } from '../../adapters/memory/module';
export { nomad } from './nomad';
export { openstack } from './openstack';
