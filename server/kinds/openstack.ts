/** OpenStack's registration: its module, the resolvers of schema/openstack/ and its demo part. */
import { openStackModule } from '../../adapters/openstack/module';
import { openstackResolvers } from '../../resolvers/openstack';
import type { OpenStackDemoInfo } from '../../simulators/openstack/demo-backend';
import type { KindParts } from './registration';

export const openstack = {
  module: openStackModule,
  resolvers: openstackResolvers,
  demo: () => (require('../../simulators/openstack/demo-backend') as typeof import('../../simulators/openstack/demo-backend')).openStackDemo,
} satisfies KindParts<OpenStackDemoInfo>;
