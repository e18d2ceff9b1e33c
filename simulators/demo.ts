/**
 * The demo parts, one per simulated kind, in the order demo mode lists their backends, banner
 * lines and activity steps. Adding a kind to the demo is its `demo-backend.ts` and one line here.
 */
import { nomadDemo } from './nomad/demo-backend';
import { openStackDemo } from './openstack/demo-backend';

/** Every demo part, by config kind (server/demo.ts starts them in this order). */
export const DEMO_PARTS = {
  nomad: nomadDemo,
  openstack: openStackDemo,
} as const;
