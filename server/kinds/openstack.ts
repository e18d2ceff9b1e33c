/** OpenStack's registration: its module, the resolvers of schema/openstack/ and its demo part. */
import { openStackModule } from '../../adapters/openstack/module';
import { openstackResolvers } from '../../resolvers/openstack';
import type { OpenStackDemoInfo } from '../../simulators/openstack/demo-backend';
import type { KindParts } from './registration';

type DemoModule = typeof import('../../simulators/openstack/demo-backend');

export const openstack = {
  module: openStackModule,
  resolvers: openstackResolvers,
  // Loaded when demo mode starts: a configured gateway never loads the simulators.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- that lazy load
  demo: () => (require('../../simulators/openstack/demo-backend') as DemoModule).openStackDemo,
} satisfies KindParts<OpenStackDemoInfo>;
