/** OpenStack's registration: its module, the resolvers of schema/openstack/ (and where events get their fields) and its demo part. */
import { openStackModule } from '../../adapters/openstack/module';
import { openstackResolvers } from '../../resolvers/openstack';
import { openstackEventFields } from '../../resolvers/openstack/event-fields';
import type { OpenStackDemoInfo } from '../../simulators/openstack/demo-backend';
import type { KindParts } from './registration';

type DemoModule = typeof import('../../simulators/openstack/demo-backend');

export const openstack = {
  module: openStackModule,
  resolvers: openstackResolvers,
  eventFields: openstackEventFields,
  // Loaded when demo mode starts: a configured gateway never loads the simulators.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- that lazy load
  demo: () => (require('../../simulators/openstack/demo-backend') as DemoModule).openStackDemo,
} satisfies KindParts<OpenStackDemoInfo>;
