/** Nomad's registration: its module, the resolvers of schema/nomad/ and its demo part. */
import { nomadModule } from '../../adapters/nomad/module';
import { nomadResolvers } from '../../resolvers/nomad';
import type { NomadDemoInfo } from '../../simulators/nomad/demo-backend';
import type { KindParts } from './registration';

export const nomad = {
  module: nomadModule,
  resolvers: nomadResolvers,
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded when demo mode starts: a configured gateway never loads the simulators
  demo: () => (require('../../simulators/nomad/demo-backend') as typeof import('../../simulators/nomad/demo-backend')).nomadDemo,
} satisfies KindParts<NomadDemoInfo>;
