/** Nomad's registration: its module, the resolvers of schema/nomad/ (and where events get their fields) and its demo part. */
import { nomadModule } from '../../adapters/nomad/module';
import { nomadResolvers } from '../../resolvers/nomad';
import { nomadEventFields } from '../../resolvers/nomad/event-fields';
import type { NomadDemoInfo } from '../../simulators/nomad/demo-backend';
import type { KindParts } from './registration';

type DemoModule = typeof import('../../simulators/nomad/demo-backend');

export const nomad = {
  module: nomadModule,
  resolvers: nomadResolvers,
  eventFields: nomadEventFields,
  // Loaded when demo mode starts: a configured gateway never loads the simulators.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- that lazy load
  demo: () => (require('../../simulators/nomad/demo-backend') as DemoModule).nomadDemo,
} satisfies KindParts<NomadDemoInfo>;
