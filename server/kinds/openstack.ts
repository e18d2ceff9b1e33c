/** OpenStack's registration: its module, the resolvers of schema/openstack/ and its demo part. */
import { openStackModule } from '../../adapters/openstack/module';
import { openstackResolvers } from '../../resolvers/openstack';
import type { OpenStackDemoInfo } from '../../simulators/openstack/demo-backend';
import type { KindParts } from './registration';

export const openstack = {
  module: openStackModule,
  resolvers: openstackResolvers,
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded when demo mode starts: a configured gateway never loads the simulators
  demo: () => (require('../../simulators/openstack/demo-backend') as typeof import('../../simulators/openstack/demo-backend')).openStackDemo,
} satisfies KindParts<OpenStackDemoInfo>;
